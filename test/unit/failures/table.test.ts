// The failure table (contract/failures.ts): each type's retryability, the list retry policies use,
// the one constructor, and the rule that nothing outside the table builds an ApplicationFailure.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES, NON_RETRYABLE_TYPES, failure, type FailureType } from '../../../contract/failures.js';
import { SlurmApiError, type ErrorKind } from '../../../backends/slurm/errors.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

// Retryable = the activity's own retries may try again. Spelled out here so a change to the table is a
// visible change to this test too.
const EXPECTED: Record<FailureType, 'retryable' | 'non-retryable'> = {
  ObservationFailed: 'retryable',
  PlacementBackoff: 'retryable',
  JobNotFound: 'retryable',
  PartitionInUse: 'retryable',
  AuditUnavailable: 'retryable',
  PayloadRefused: 'non-retryable',
  JobFailed: 'non-retryable',
  InfrastructureFailed: 'non-retryable',
  JobCancelled: 'non-retryable',
  RuntimeUnavailable: 'non-retryable',
  InvalidRequest: 'non-retryable',
  NoValidCheckpoint: 'non-retryable',
  GateFailed: 'non-retryable',
  QuotaExceeded: 'non-retryable',
  TenantPolicyDenied: 'non-retryable',
  DeadlineExceeded: 'non-retryable',
  PlacementRejected: 'non-retryable',
  StageFailed: 'non-retryable',
  ArgoPodFailed: 'non-retryable',
};

describe('the failure table', () => {
  test('lists exactly the expected types, each under its own name', () => {
    expect(Object.keys(FAILURES).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [key, f] of Object.entries(FAILURES)) expect(f.type).toBe(key);
  });

  test.each(Object.entries(EXPECTED))('%s is %s', (type, want) => {
    expect(FAILURES[type as FailureType].nonRetryable).toBe(want === 'non-retryable');
  });

  test('NON_RETRYABLE_TYPES is every non-retryable type and nothing else', () => {
    const want = Object.entries(EXPECTED).filter(([, r]) => r === 'non-retryable').map(([t]) => t);
    expect([...NON_RETRYABLE_TYPES].sort()).toEqual(want.sort());
    expect(new Set(NON_RETRYABLE_TYPES).size).toBe(NON_RETRYABLE_TYPES.length);
    for (const t of ['ObservationFailed', 'PlacementBackoff', 'JobNotFound', 'PartitionInUse']) expect(NON_RETRYABLE_TYPES).not.toContain(t);
  });
});

describe('failure()', () => {
  test.each(Object.keys(EXPECTED) as FailureType[])('builds a %s ApplicationFailure with the table\'s retryability', (type) => {
    const f = failure(type, `a ${type}`);
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type, message: `a ${type}`, nonRetryable: FAILURES[type].nonRetryable });
  });

  test('passes details, cause and nextRetryDelay through', () => {
    const cause = new Error('underneath');
    const f = failure('ObservationFailed', 'could not look', { details: [{ jobId: '42' }], cause, nextRetryDelay: 1500 });
    expect(f.details).toEqual([{ jobId: '42' }]);
    expect(f.cause).toBe(cause);
    expect(f.nextRetryDelay).toBe(1500);
    expect(failure('GateFailed', 'x').nextRetryDelay).toBeUndefined();
  });
});

test('the Slurm clients name their errors by the table (the activity reports the name as the failure type)', () => {
  const names: Record<ErrorKind, FailureType> = { observation: 'ObservationFailed', placement: 'PlacementBackoff', 'not-found': 'JobNotFound', invalid: 'InvalidRequest' };
  for (const [kind, type] of Object.entries(names) as [ErrorKind, FailureType][]) {
    const e = new SlurmApiError(kind, 'x');
    expect(e.name).toBe(FAILURES[type].type);
  }
});

function sources(dir: string): string[] {
  let out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out = out.concat(sources(p));
    else if (n.endsWith('.ts')) out.push(p);
  }
  return out;
}

test('only contract/failures.ts builds an ApplicationFailure', () => {
  const dirs = ['activities', 'argo', 'backends', 'cli', 'config', 'contract', 'placement', 'programs', 'sdk', 'workers', 'workflows'];
  const offenders = dirs
    .flatMap((d) => sources(join(ROOT, d)))
    .filter((f) => relative(ROOT, f) !== join('contract', 'failures.ts'))
    .filter((f) => /ApplicationFailure\s*\.\s*(create|retryable|nonRetryable|fromError)\s*\(|new\s+ApplicationFailure\s*\(/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f));
  expect(offenders).toEqual([]);
});
