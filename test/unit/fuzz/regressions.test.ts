// Crashes the fuzz suite (bench/fuzz) found in the loaders, each now a clean, located rejection:
// YAML aliases that do not resolve or that explode (spec, sites, quotas files), an 8 s
// (quadratic) duplicate-key check in the Argo loader, and a history whose payload does not decode (runs show).
import { parsePipelineSpec } from '../../../contract/parse.js';
import { parseSitesFile } from '../../../contract/sites.js';
import { parseQuotasFile } from '../../../contract/quotas.js';
import { InputError } from '../../../contract/input-error.js';
import { lintText } from '../../../argo/lint/validate.js';
import { analyseHistory } from '../../../sdk/history.js';
import { historyFromFile } from '../../../workers/replay.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { readFileSync } from 'node:fs';

const BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n';

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e.issues;
    throw e;
  }
  throw new Error('expected an InputError');
}

test.each([
  ['spec', (t: string) => parsePipelineSpec(t, 's.yaml')],
  ['sites', (t: string) => parseSitesFile(t, 'sites.yaml')],
  ['quotas', (t: string) => parseQuotasFile(t, 'quotas.yaml')],
])('%s: an alias bomb and an alias without anchor are input errors at the alias line (were ReferenceErrors)', (_n, load) => {
  expect(issuesOf(() => load(BOMB))).toEqual([{ path: '', line: 2, message: 'YAML aliases expand beyond 100 nodes (refused as a resource exhaustion attack)' }]);
  expect(issuesOf(() => load('name: x\nqos: *nowhere\n'))).toEqual([expect.objectContaining({ line: 2, message: expect.stringMatching(/^YAML alias: Unresolved alias/) })]);
});

test('argo: duplicate keys are still refused at their line (now by one linear pass, not yaml\'s quadratic check)', () => {
  const dup = lintText('apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nkind: Workflow\nmetadata: {generateName: x-}\n', 'a.yaml');
  expect(dup.issues).toEqual([expect.objectContaining({ path: 'kind', line: 3, message: expect.stringMatching(/Map keys must be unique/) })]);
  // The 20k-key mapping the fuzz suite timed at 8 s is refused (no kind) with its line; its time is
  // the bench's business (npm run bench:fuzz, "max ms").
  const big = `metadata:\n  labels:\n${Array.from({ length: 20000 }, (_, i) => `    k${i}: v`).join('\n')}\n`;
  expect(lintText(big, 'a.yaml').issues).toEqual([expect.objectContaining({ path: 'kind', line: 1 })]);
});

test('history: a payload that does not decode no longer fails `runs show` (was ValueError)', () => {
  const json = JSON.parse(readFileSync('test/histories/quotaLedger-admit-release.json', 'utf8'));
  json.events[0].workflowExecutionStartedEventAttributes.input.payloads[0] = { metadata: { encoding: Buffer.from('binary/encrypted').toString('base64') } };
  const report = analyseHistory('x', historyFromFile(json), defaultPayloadConverter);
  expect(report.type).toBe('quotaLedger');
});
