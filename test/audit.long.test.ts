// The audit log from a real pipeline run (local jobs, checkpoints, model server on the real dev
// server): every external side effect appended once, with who/what/where; `tandem audit verify` passes
// on it and names the record once one byte of the file is changed; `tandem audit list` filters it.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalServingBackend } from '../backends/local-serving.js';
import { loadAuditKey, readAudit, verifyAudit } from '../audit/log.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';
import { LocalJobBackend } from '../backends/local-jobs.js';

const tandem = (args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });

test('a run appends its side effects; verify passes, then names an edited record', async () => {
  const home = tempDir('audit');
  const w = await startWorker({ taskQueue: uniqueQueue('audit'), home });
  const tuning = { pollMaxMs: 500, heartbeatTimeoutMs: 5000 };
  try {
    const h = await w.tandem.launch(spec({ name: 'audited', tenant: 'acme', stages: { train: { steps: 40, checkpointEvery: 10 }, checkpoint: { keep: 2 } } }), { id: 'audit-run-1', tuning });
    await h.result();
    const cancelled = await w.tandem.launch(spec({ name: 'audited', tenant: 'acme', stages: { train: { steps: 5000, checkpointEvery: 50, stepDelayMs: 20 } } }), { id: 'audit-run-2', tuning });
    const job = await jobNameOf(cancelled.workflow, 'train', 1);
    await waitFor('training to run', async () => ((await new LocalJobBackend(home).status(job).catch(() => undefined))?.state === 'RUNNING') || undefined);
    await cancelled.cancel();
    await cancelled.result().catch(() => undefined);
  } finally {
    for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
    await w.stop();
  }
  const file = join(home, 'audit.jsonl');
  const all = readAudit(file).records.map((r) => r.record);
  // Each side effect has its intent record before it (activities/audit.ts); the outcomes are checked here.
  expect(all.filter((r) => r.details?.phase === 'intent').length).toBeGreaterThanOrEqual(5);
  const records = all.filter((r) => r.details?.phase !== 'intent');
  const of = (run: string) => records.filter((r) => r.who.run === run).map((r) => [r.what, r.details?.stage ?? r.details?.name ?? ''].join(' '));
  expect(records.every((r) => r.who.tenant === 'acme' && r.who.operator && r.where.namespace === 'default')).toBe(true);
  const one = of('audit-run-1');
  expect(one.filter((w) => w.startsWith('job.submitted'))).toEqual(['job.submitted preprocess', 'job.submitted train']);
  expect(one).toEqual(expect.arrayContaining([expect.stringMatching(/^checkpoint\.pruned/), expect.stringMatching(/^deployment\.rolledOut/)]));
  expect(records.find((r) => r.what === 'checkpoint.pruned')!.details!.removed).toHaveLength(2); // steps 10 and 20 of 10…40, keep 2
  expect(of('audit-run-2')).toEqual(['job.submitted preprocess', 'job.submitted train', expect.stringMatching(/^job\.cancelled tandem-/)]);
  expect(JSON.stringify(records)).not.toMatch(/TANDEM_DATA_DIR|"env"/); // names and ids, never environments
  expect(verifyAudit(file, loadAuditKey(join(home, 'keys', 'audit.key'), file, false))).toMatchObject({ ok: true, records: all.length });

  const env = { TANDEM_HOME: home };
  expect(await tandem(['audit', 'verify'], env)).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`${all.length} records, chain and MACs intact`)) });
  const listed = await tandem(['audit', 'list', '--run', 'audit-run-2', '--json'], env);
  expect(listed.out.trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.details?.phase !== 'intent').map((r) => r.what)).toEqual(['job.submitted', 'job.submitted', 'job.cancelled']);
  expect((await tandem(['audit', 'list', '--tenant', 'nobody'], env)).out).toMatch(/no audit records match/);

  // One byte: the first digit of the second record's time.
  const lines = readFileSync(file, 'utf8').split('\n');
  const edited = lines[1]!.replace(/"at":"(\d)/, (_m, d: string) => `"at":"${(Number(d) + 1) % 10}`);
  expect(edited).not.toBe(lines[1]);
  lines[1] = edited;
  writeFileSync(file, lines.join('\n'));
  const broken = await tandem(['audit', 'verify'], env);
  expect(broken.code).toBe(1);
  expect(broken.out).toMatch(/line 2 \(seq 2\): record seq 2 was modified/);
});
