// The logger (observe/log.ts): JSON lines with the run's context first, the text default, and secrets
// never printed — a canary secret set in the environment, as config/worker.ts marks it, is redacted
// wherever it appears.
import { TandemLogger } from '../../../observe/log.js';
import { secretValues } from '../../../config/worker.js';

const at = new Date('2025-01-02T03:04:05.000Z');
const capture = (o: ConstructorParameters<typeof TandemLogger>[0] = {}) => {
  const lines: string[] = [];
  return { lines, log: new TandemLogger({ now: () => at, write: (l) => lines.push(l), ...o }) };
};

test('json: one object a line, time, level, msg, then workflow id, run id, stage, site, attempt', () => {
  const { lines, log } = capture({ format: 'json' });
  // What Temporal's activity logger passes (activityLogAttributes) plus the interceptor's stage/site.
  log.info('job status unavailable', { workflowId: 'wf-1', workflowRunId: 'run-1', attempt: 2, activityType: 'awaitJob', stage: 'train', site: 'zurich', taskToken: 'AAAA-capability', jobId: '42' });
  expect(lines).toHaveLength(1);
  const o = JSON.parse(lines[0]!);
  expect(Object.keys(o).slice(0, 8)).toEqual(['time', 'level', 'msg', 'workflowId', 'runId', 'stage', 'site', 'attempt']);
  expect(o).toEqual({ time: at.toISOString(), level: 'info', msg: 'job status unavailable', workflowId: 'wf-1', runId: 'run-1', stage: 'train', site: 'zurich', attempt: 2, activityType: 'awaitJob', jobId: '42' });
});

test('text is the default: one readable line', () => {
  const { lines, log } = capture();
  log.warn('compensation failed', { workflowId: 'wf-1', compensation: 'cancel train job 42', error: new Error('boom') });
  expect(lines).toEqual(['2025-01-02T03:04:05.000Z WARN  compensation failed workflowId=wf-1 compensation="cancel train job 42" error={"name":"Error","message":"boom"}']);
});

test('levels below the minimum are not written; forwarded Core logs keep their own time', () => {
  const { lines, log } = capture({ format: 'json', level: 'WARN' });
  log.info('chatty');
  log.debug('chattier');
  log.error('core said', { [Symbol.for('log_timestamp')]: 1_700_000_000_000_000_000n, sdkComponent: 'core' });
  expect(lines.map((l) => JSON.parse(l))).toEqual([{ time: new Date(1_700_000_000_000).toISOString(), level: 'error', msg: 'core said', sdkComponent: 'core' }]);
});

describe('secrets are never logged', () => {
  const CANARY = 'canary-7f3a9c1e-SECRET';
  const env = { TANDEM_SLURMRESTD_TOKEN: CANARY, TEMPORAL_API_KEY: 'another-canary-key', TANDEM_HOME: '/not/a/secret' };

  test.each(['json', 'text'] as const)('%s: a canary secret from the environment is redacted wherever it appears', (format) => {
    const secrets = secretValues(env);
    expect(secrets).toEqual(expect.arrayContaining([CANARY, 'another-canary-key']));
    expect(secrets).not.toContain('/not/a/secret');
    const { lines, log } = capture({ format, secrets });
    log.error(`request failed with token ${CANARY}`, { url: `https://x/?t=${CANARY}`, nested: { headers: { 'X-SLURM-USER-TOKEN': CANARY, quoted: `"${CANARY}"` } }, error: new Error(`bad ${CANARY}`) });
    log.info('hello', { key: 'another-canary-key' });
    expect(lines.join('\n')).not.toContain(CANARY);
    expect(lines.join('\n')).not.toContain('another-canary-key');
    expect(lines.join('\n')).toContain('[redacted]');
  });

  test('fields named like credentials are dropped whatever they hold; the activity task token is never logged', () => {
    const { lines, log } = capture({ format: 'json' });
    log.info('x', { token: 'not-configured-but-a-token', clientSecret: 'cs', password: 'pw', apiKey: 'k', taskToken: 'tt', tokenUrl: 'https://auth/token', site: 'zurich' });
    expect(JSON.parse(lines[0]!)).toEqual({ time: at.toISOString(), level: 'info', msg: 'x', site: 'zurich', tokenUrl: 'https://auth/token' });
  });

  test('the secrets of a loaded configuration are included: sites file secrets, Slurm credentials, codec keys', () => {
    const config = { sites: { file: 'f', parsed: { sites: [] } as never, secrets: { ZURICH_SECRET: 'site-secret-value' } }, slurm: { api: 'slurmrestd', token: 'slurm-token-value' } as never, codec: { keys: [{ id: 'k1', key: Buffer.alloc(32, 7) }] }, connection: { address: 'x:1', apiKey: 'api-key-value' } };
    expect(secretValues({}, config)).toEqual(expect.arrayContaining(['site-secret-value', 'slurm-token-value', 'api-key-value', Buffer.alloc(32, 7).toString('base64')]));
  });
});
