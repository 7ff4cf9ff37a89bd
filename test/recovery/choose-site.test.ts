// Where failover goes: health probes first, then placement over the healthy sites' live inventories;
// plus the sites file (TANDEM_SITES_FILE) and `tandem run --failover` flags that configure it.
import { createRecoveryActivities, type RecoverySite, type SiteHealth } from '../../activities/recovery.js';
import { recoverySite } from '../../activities/recovery-sites.js';
import type { InventorySource, RunningWork } from '../../activities/placement.js';
import type { JobRequest, SiteSpec } from '../../placement/index.js';
import { parseSitesFile } from '../../contract/sites.js';
import { SpecError } from '../../contract/parse.js';
import { failoverTuning } from '../../cli/failover.js';
import { TandemClient } from '../../sdk/client.js';
import { spec, startWorker, uniqueQueue } from '../helpers.js';
import { fakeActivities } from '../fake-activities.js';

/** A one-node site with `cpus` cores of which `busy` are taken by running work. */
function fakeSite(name: string, o: { cpus?: number; busy?: number; health?: () => Promise<SiteHealth>; inventory?: false | (() => Promise<never>) } = {}): RecoverySite {
  const cpus = o.cpus ?? 64;
  const node = `${name}-n1`;
  const sites: SiteSpec[] = [{ name: `${name}-cluster`, clusters: [{ name, partitions: [{ name: 'normal', nodes: [{ id: node, cpus, gpus: 0, memoryMB: 256_000 }] }] }] }];
  const running: RunningWork[] = o.busy ? [{ job: { id: 'other', type: 'hpc-mpi', tenant: 'x', qos: 'gold', priority: 1, submit: 0, count: 1, per: { cpus: o.busy, gpus: 0, memoryMB: 0 }, walltime: 3600 }, nodes: [{ node, slots: 1 }], start: 0 }] : [];
  const inventory: InventorySource | undefined = o.inventory === false ? undefined : { name, gather: o.inventory ?? (async () => ({ sites, running })) };
  return { name, root: `/tmp/${name}`, backend: undefined as never, health: o.health ?? (async () => ({ healthy: true, detail: 'ping ok' })), inventory };
}

const train = (cpus: number): JobRequest => ({ id: 'p-train-1', type: 'hpc-mpi', tenant: 'default', qos: 'silver', priority: 100, submit: Date.now() / 1000, count: 1, per: { cpus, gpus: 0, memoryMB: 1024 }, walltime: 3600, checkpointable: true });
const choose = (sites: RecoverySite[], input: Parameters<ReturnType<typeof createRecoveryActivities>['chooseSite']>[0]) => createRecoveryActivities({ home: '/tmp/home', sites, healthTimeoutMs: 300 }).chooseSite(input);

describe('chooseSite', () => {
  test('without a job, the first healthy site in preference order; unhealthy and excluded ones are reported', async () => {
    const r = await choose([fakeSite('zurich'), fakeSite('lugano', { health: async () => ({ healthy: false, detail: 'servicesHealth: scheduler down' }) }), fakeSite('geneva')], { exclude: ['zurich'] });
    expect(r.site).toBe('geneva');
    expect(r.probes).toEqual(['zurich: excluded', 'lugano: unhealthy (servicesHealth: scheduler down)', 'geneva: healthy (ping ok)']);
  });

  test('placement sends the job where it starts now, not to the preferred but full site', async () => {
    const r = await choose([fakeSite('zurich', { busy: 60 }), fakeSite('lugano')], { exclude: [], job: train(16) });
    expect(r.site).toBe('lugano');
    expect(r.probes.at(-1)).toMatch(/^placement: start on lugano\/zurich|^placement: start on lugano\//);
  });

  test('equal sites keep the preference order, whichever inventory answers first', async () => {
    const slow = fakeSite('zurich');
    const inner = slow.inventory!;
    slow.inventory = { name: 'zurich', gather: async () => (await new Promise((r) => setTimeout(r, 50)), inner.gather()) };
    expect((await choose([slow, fakeSite('lugano')], { exclude: [], job: train(4) })).site).toBe('zurich');
  });

  test('a job no healthy site can ever hold, or sites without inventories, fall back to preference order with why', async () => {
    const tooBig = await choose([fakeSite('zurich'), fakeSite('lugano')], { exclude: [], job: train(512) });
    expect(tooBig.site).toBe('zurich');
    expect(tooBig.probes.at(-1)).toMatch(/^placement: reject .*; preference order decides$/);
    const blind = await choose([fakeSite('zurich', { inventory: false }), fakeSite('lugano', { inventory: async () => Promise.reject(new Error('GET /nodes → 503')) })], { exclude: [], job: train(4) });
    expect(blind.site).toBe('zurich');
    expect(blind.probes.at(-1)).toBe('placement: no inventory; not ranked: zurich (no inventory source), lugano (GET /nodes → 503); preference order decides');
  });

  test('a site whose inventory cannot be read is not ranked; the one that can be read and fits wins', async () => {
    const r = await choose([fakeSite('zurich', { inventory: async () => Promise.reject(new Error('timeout')) }), fakeSite('lugano')], { exclude: [], job: train(4) });
    expect(r.site).toBe('lugano');
    expect(r.probes.at(-1)).toMatch(/not ranked: zurich \(timeout\)/);
  });

  test('no sites on the worker, or a site it does not have, fail at once (not retried) naming what to set', async () => {
    await expect(choose([], { exclude: [] })).rejects.toMatchObject({ nonRetryable: true, message: expect.stringContaining('set TANDEM_SITES_FILE') });
    await expect(choose([fakeSite('zurich')], { exclude: [], sites: ['zurich', 'geneva'] })).rejects.toThrow('failover site geneva not configured on this worker (configured: zurich)');
  });

  test('a health probe that hangs counts as unhealthy within the timeout; none healthy gives no site', async () => {
    // A probe that never answers must not hang the choice (jest's timeout would catch a hang).
    const r = await choose([fakeSite('zurich', { health: () => new Promise(() => {}) })], { exclude: [], job: train(4) });
    expect(r.site).toBeUndefined();
    expect(r.probes).toEqual(['zurich: unhealthy (zurich health: no answer within 300 ms)']);
  });
});

const SITES = `sites:
  - name: zurich
    api: slurmrestd
    socket: /run/slurmrestd-zurich.sock
    workDir: /scratch/zurich
  - name: lugano
    api: firecrest
    url: https://firecrest.example.org/v2
    tokenUrl: https://auth.example.org/token
    clientId: tandem
    clientSecretEnv: LUGANO_SECRET
    workDir: /scratch/lugano
    root: /mnt/lugano/tandem
`;

describe('sites file', () => {
  test('builds one recovery site per entry, with health, inventory and (FirecREST) checksum verification', () => {
    const file = parseSitesFile(SITES);
    const [z, l] = file.sites.map((s) => recoverySite(s, { LUGANO_SECRET: 's3cret' }));
    expect([z.name, z.root, !!z.inventory, !!z.hasher]).toEqual(['zurich', '/scratch/zurich/tandem', true, false]);
    expect([l.name, l.root, !!l.inventory, !!l.hasher]).toEqual(['lugano', '/mnt/lugano/tandem', true, true]);
  });

  test('bad entries are named by field and line; a missing secret names the variable, never a value', () => {
    const bad = SITES.replace('    socket: /run/slurmrestd-zurich.sock\n', '').replace('clientId: tandem', 'clientID: tandem');
    let err: unknown;
    try {
      parseSitesFile(bad, 'sites.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpecError);
    const msg = (err as Error).message;
    expect(msg).toContain('sites.yaml: invalid sites file');
    expect(msg).toMatch(/sites\[0\]\.socket \(line 2\): give exactly one of "socket" and "url"/);
    expect(msg).toMatch(/sites\[1\]\.clientID \(line 9\): unknown field "clientID"/);
    const lugano = parseSitesFile(SITES).sites[1];
    expect(() => recoverySite(lugano, {})).toThrow('site lugano: clientSecretEnv names the environment variable LUGANO_SECRET, which is not set');
    expect(() => parseSitesFile(SITES.replace('name: lugano', 'name: zurich'))).toThrow(/site names must be unique/);
  });
});

test('a pipeline launched with failover on a worker without sites fails at train at once, saying what to set', async () => {
  const fake = fakeActivities();
  const real = createRecoveryActivities({ home: '/tmp/home', sites: [] });
  const w = await startWorker({ taskQueue: uniqueQueue('fo-nosites'), activities: { ...fake.acts, chooseSite: real.chooseSite } });
  try {
    const h = await w.tandem.launch(spec({ stages: { train: { runtime: 'slurm' } } }), { tuning: { failover: {} } });
    await expect(h.result()).rejects.toThrow();
    const st = await h.status();
    expect(st.phase).toBe('failed');
    expect(st.stages.train.status).toBe('failed');
    expect(st.error).toContain('set TANDEM_SITES_FILE');
    expect(fake.calls.filter((c) => c.startsWith('submitAt'))).toEqual([]);
  } finally {
    await w.stop();
  }
}, 60_000);

describe('tandem run --failover', () => {
  test('flags become the failover tuning; bad values are refused with the flag named', () => {
    expect(failoverTuning({})).toBeUndefined();
    expect(failoverTuning({ failover: true })).toEqual({});
    expect(failoverTuning({ failover: 'zurich, lugano', failoverGrace: '90s', maxFailovers: '2' })).toEqual({ sites: ['zurich', 'lugano'], graceMs: 90_000, maxFailovers: 2 });
    expect(() => failoverTuning({ failover: true, failoverGrace: 'soon' })).toThrow('--failover-grace "soon" is not a duration');
    expect(() => failoverTuning({ failover: true, maxFailovers: '-1' })).toThrow('--max-failovers "-1" must be a whole number');
    expect(() => failoverTuning({ maxFailovers: '2' })).toThrow('need --failover');
  });

  test('failover with training that is not on Slurm is refused before anything starts', async () => {
    const client = { ...TandemClient.prototype } as TandemClient; // launch validates before it touches the server
    await expect(TandemClient.prototype.launch.call(client, spec({ stages: { train: { runtime: 'local' } } }), { tuning: { failover: {} } })).rejects.toThrow('stages.train.runtime is "local"');
  });
});
