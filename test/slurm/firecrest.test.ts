// FirecREST v2 client and FirecrestJobBackend against the spec-validating gateway in front of a real Slurm.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FirecrestClient } from '../../backends/slurm/firecrest-client.js';
import { classifyJobState } from '../../contract/outcome.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { CLIENT, startBed, type Bed } from './firecrest-bed.js';
import { finished, request, running, until } from './jobs.js';

let bed: Bed;
let client: FirecrestClient;
const SYS = 'fire';

beforeAll(async () => {
  bed = await startBed(SYS);
  client = new FirecrestClient(bed.firecrest());
});

afterEach(() => {
  // A contract violation anywhere (request or response) fails the test that caused it.
  const v = bed.gateway.violations.splice(0);
  expect(v).toEqual([]);
  bed.gateway.setFaults(undefined);
});

afterAll(async () => {
  await bed?.close();
});

test('status endpoints: systems, nodes, partitions, reservations, userinfo', async () => {
  expect((await client.systems()).systems.map((s) => s.name)).toEqual([SYS]);
  const nodes = (await client.nodes(SYS)).nodes;
  expect(nodes).toEqual([expect.objectContaining({ name: bed.cluster.node, cpus: 8 })]);
  expect(nodes[0]!.state[0]).toMatch(/IDLE|MIXED|ALLOCATED/);
  expect((await client.partitions(SYS)).partitions.map((p) => p.name).sort()).toEqual(['debug', 'long']);
  expect((await client.reservations(SYS)).reservations).toEqual([]);
  expect((await client.userinfo(SYS)).user.name).toBe(bed.cluster.restUser);
});

test('filesystem: mkdir, upload, ls, stat, checksum, head, tail, view, download', async () => {
  const dir = join(bed.cluster.workDir, 'ckpt', 'step-10');
  await client.mkdir(SYS, dir);
  const content = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  await client.upload(SYS, join(dir, 'weights.txt'), content);
  expect((await client.ls(SYS, dir)).map((f) => f.name)).toEqual(['weights.txt']);
  expect((await client.stat(SYS, join(dir, 'weights.txt')))?.size).toBe(Buffer.byteLength(content));
  expect((await client.checksum(SYS, join(dir, 'weights.txt')))?.checksum).toBe(createHash('sha256').update(content).digest('hex'));
  expect(await client.head(SYS, join(dir, 'weights.txt'), 2)).toBe('line 1\nline 2\n');
  expect(await client.tail(SYS, join(dir, 'weights.txt'), 2)).toBe('line 29\nline 30\n');
  expect(await client.view(SYS, join(dir, 'weights.txt'), 6)).toBe('line 1');
  expect((await client.download(SYS, join(dir, 'weights.txt'))).toString()).toBe(content);
  await expect(client.stat(SYS, join(dir, 'missing'))).rejects.toMatchObject({ kind: 'not-found' });
});

test('a job completes; #SBATCH lines reach Slurm through FirecREST; metadata holds the script', async () => {
  const backend = bed.backend();
  const ref = await backend.submit(request('fire-ok', ['/bin/echo', 'trained'], { resources: ResourcesSchema.parse({ partition: 'long', cpusPerTask: 2, memoryMB: 64 }), walltimeMs: 90_000 }));
  const st = await until(backend, ref.jobId, finished);
  expect(st).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
  const shown = await bed.cluster.cli('scontrol', ['show', 'job', ref.jobId]);
  expect(shown).toMatch(/TimeLimit=00:02:00/);
  expect(shown).toMatch(/Partition=long/);
  expect(shown).toMatch(/Requeue=0/);
  expect(shown).toMatch(/NumCPUs=2/);
  expect((await client.jobMetadata(SYS, ref.jobId))?.script).toContain("exec '/bin/echo' 'trained'");
  expect((await client.jobsByName(SYS, 'fire-ok')).map((j) => j.jobId)).toEqual([ref.jobId]);
});

test('non-zero exit → FAILED with exit code and the output tail read through FirecREST', async () => {
  const backend = bed.backend();
  const ref = await backend.submit(request('fire-fail', ['/bin/sh', '-c', 'echo "loss diverged" >&2; exit 7']));
  const st = await until(backend, ref.jobId, finished);
  expect(st).toMatchObject({ state: 'FAILED', exitCode: 7 });
  expect(classifyJobState(st.state)).toBe('job-failure');
  expect(st.tail).toContain('loss diverged');
});

test('cancel during the run; cancelling a gone job is not an error (404 = already gone)', async () => {
  const backend = bed.backend();
  const ref = await backend.submit(request('fire-cancel', ['/bin/sleep', '300']));
  await until(backend, ref.jobId, running);
  await backend.cancel(ref.jobId);
  expect((await until(backend, ref.jobId, finished)).state).toBe('CANCELLED');
  await backend.cancel(ref.jobId);
  await backend.cancel('987654');
});

test('a hostile parameter is escaped and harmless through FirecREST', async () => {
  const backend = bed.backend();
  const canary = join(bed.cluster.workDir, 'pwned-fire');
  const hostile = `"; rm -rf ~ #'; touch ${canary}; echo '`;
  const ref = await backend.submit(request('fire-hostile', ['/bin/echo', hostile], { env: { TANDEM_X: `$(touch ${canary})` } }));
  expect((await until(backend, ref.jobId, finished)).state).toBe('COMPLETED');
  expect(readFileSync(join(bed.cluster.workDir, 'fire-hostile.out'), 'utf8').trim()).toBe(hostile);
  expect(existsSync(canary)).toBe(false);
});

test('error mapping: 429 honours Retry-After; 400 is not retried; exhausted observation failures are ObservationFailed', async () => {
  const c = new FirecrestClient(bed.firecrest({ backoff: { attempts: 2, initialMs: 10, maxMs: 50 } }));
  bed.gateway.setFaults({ rate: 1, kinds: ['429'], retryAfterS: 1 });
  const before = bed.gateway.stats.requests;
  const t0 = Date.now();
  await expect(c.partitions(SYS)).rejects.toMatchObject({ name: 'ObservationFailed', status: 429 });
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  expect(bed.gateway.stats.requests - before).toBe(2);
  bed.gateway.setFaults(undefined);
  const n = bed.gateway.stats.requests;
  await expect(c.stat(SYS, 'relative/path')).rejects.toMatchObject({ name: 'InvalidRequest', status: 400 });
  expect(bed.gateway.stats.requests - n).toBe(1);
});

test('errors never carry the client secret or tokens', async () => {
  const c = new FirecrestClient(bed.firecrest({ credentials: { tokenUrl: bed.tokenUrl, clientId: CLIENT.clientId, clientSecret: 'wrong-secret-value' } }));
  const err = (await c.systems().catch((e: Error) => e)) as Error;
  expect(err.name).toBe('InvalidRequest');
  expect(`${err.message}\n${err.stack}\n${JSON.stringify(err)}`).not.toMatch(/wrong-secret-value|s3cret|Bearer|Basic /);
  bed.gateway.setFaults({ rate: 1, kinds: ['500'] });
  const err2 = (await new FirecrestClient(bed.firecrest({ backoff: { attempts: 1, initialMs: 1, maxMs: 1 } })).systems().catch((e: Error) => e)) as Error;
  expect(`${err2.message}\n${err2.stack}\n${JSON.stringify(err2)}`).not.toMatch(/s3cret|Bearer|eyJ/);
});

test('tokens expiring every 2 s: refreshed ahead, and a 401 triggers one refresh and a retry', async () => {
  const short = await startBedTokens(2, 1); // the last half of every token's life is refused: 401s are certain
  try {
    const backend = short.backend({ firecrest: { token: { refreshMarginMs: 0 } } });
    const ref = await backend.submit(request('fire-tokens', ['/bin/sleep', '6']));
    const st = await until(backend, ref.jobId, finished, 40_000);
    expect(st.state).toBe('COMPLETED');
    expect(backend.client.tokens.fetches).toBeGreaterThanOrEqual(3);
    expect(short.gateway.stats.unauthorized).toBeGreaterThan(0);
    expect(short.gateway.violations).toEqual([]);
  } finally {
    await short.gateway.close();
  }
});

async function startBedTokens(lifetimeS: number, minRemainingS: number) {
  // A second gateway over the same cluster, with short-lived tokens.
  const { FirecrestGateway } = await import('./gateway/server.js');
  const gateway = new FirecrestGateway({ systems: [bed.executor], tokens: { ...CLIENT, lifetimeS, minRemainingS } });
  const { baseUrl, tokenUrl } = await gateway.listen();
  const { FirecrestJobBackend } = await import('../../backends/slurm/firecrest-backend.js');
  return {
    gateway,
    backend: (over: { firecrest?: { token?: { refreshMarginMs?: number } } }) =>
      new FirecrestJobBackend({ site: SYS, system: SYS, workDir: bed.cluster.workDir, statusIntervalMs: 200, firecrest: { baseUrl, credentials: { tokenUrl, ...CLIENT }, ...over.firecrest } }),
  };
}

test('20% injected faults (5xx, 429, 408, drops, slow answers): the job still runs exactly once and completes', async () => {
  bed.gateway.setFaults({ rate: 0.2, kinds: ['500', '502', '503', '429', '408', 'drop', 'slow'], retryAfterS: 0, slowMs: 300, seed: 7 });
  const backend = bed.backend();
  const req = request('fire-faults', ['/bin/sleep', '3']);
  let ref;
  for (let i = 0; ; i++) {
    try {
      ref = await backend.submit(req);
      break;
    } catch (e) {
      if ((e as Error).name !== 'ObservationFailed' || i > 5) throw e; // the activity would be retried
    }
  }
  let st;
  for (;;) {
    st = await backend.status(ref.jobId).catch(() => undefined);
    if (st && finished(st)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(st.state).toBe('COMPLETED');
  bed.gateway.setFaults(undefined);
  expect(Object.values(bed.gateway.stats.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  const ids = (await bed.cluster.cli('squeue', ['-h', '-n', 'fire-faults', '-t', 'all', '-o', '%A'])).trim().split('\n');
  expect(ids).toEqual([ref.jobId]);
});
