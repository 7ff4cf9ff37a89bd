// The tenant policy file (contract/tenant-policy.ts, TANDEM_TENANT_POLICY in config/worker.ts): bad
// files are refused naming the field and line, names users choose find only the file's own entries,
// and checkTenantPolicy names every field a spec goes beyond its tenant's entry at.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpecError } from '../../../contract/parse.js';
import { validatePipelineSpec } from '../../../contract/parse.js';
import type { PipelineSpecInput } from '../../../contract/pipeline.js';
import { readFileSync } from 'node:fs';
import { TenantPolicyError, checkTenantPolicy, parseSpecUnderPolicy, parseTenantPolicy, partitionsAllowed, tenantEntry, validateSpecUnderPolicy } from '../../../contract/tenant-policy.js';
import { loadTenantPolicyConfig, loadWorkerConfig } from '../../../config/worker.js';
import { ConfigError } from '../../../config/errors.js';
import { TenantGuard } from '../../../activities/tenant-policy.js';

const POLICY = `tenants:
  team-a:
    sites: [local, zurich]
    partitions:
      zurich: [debug, gpu]
    qos: [silver, bronze]
    kubernetes:
      namespaces: [team-a]
      serviceAccounts: [trainer]
    maxGpusPerJob: 4
    allowEnv: [LD_LIBRARY_PATH]
  "*":
    sites: [local]
    qos: [bronze]
`;
const policy = parseTenantPolicy(POLICY, 'policy.yaml');
const spec = (o: Partial<PipelineSpecInput> = {}) => validatePipelineSpec({ name: 'p', tenant: 'team-a', ...o });

function issuesOf(fn: () => unknown): { path: string; line?: number; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof SpecError || e instanceof TenantPolicyError || e instanceof ConfigError) return e.issues.map(({ path, line, message }) => ({ path, ...(line === undefined ? {} : { line }), message }));
    throw e;
  }
  throw new Error('expected an input error');
}

describe('the tenant policy file', () => {
  test('parses; a tenant not listed gets "*"', () => {
    expect(tenantEntry(policy, 'team-a')?.maxGpusPerJob).toBe(4);
    expect(tenantEntry(policy, 'someone')?.qos).toEqual(['bronze']);
    expect(partitionsAllowed(tenantEntry(policy, 'team-a')!, 'zurich')).toEqual(['debug', 'gpu']);
    expect(partitionsAllowed(tenantEntry(policy, 'team-a')!, 'local')).toBeUndefined(); // the mapping does not name it: any
    expect(partitionsAllowed(tenantEntry(policy, 'team-a')!)).toBeUndefined(); // placement may pick local, where any goes
    expect(partitionsAllowed(parseTenantPolicy('tenants:\n  a:\n    sites: [zurich]\n    partitions: {zurich: [gpu], "*": [x]}\n').tenants.a!, 'lumi')).toEqual(['x']);
    expect(partitionsAllowed(parseTenantPolicy('tenants:\n  a:\n    sites: [zurich]\n    partitions: {zurich: [gpu]}\n').tenants.a!)).toEqual(['gpu']);
    expect(partitionsAllowed(tenantEntry(policy, 'someone')!, 'zurich')).toBeUndefined();
  });

  test('the shipped example (templates/tenant-policy.yaml) is a valid policy', () => {
    const example = parseTenantPolicy(readFileSync(new URL('../../../templates/tenant-policy.yaml', import.meta.url), 'utf8'), 'templates/tenant-policy.yaml');
    expect(Object.keys(example.tenants)).toEqual(['vision', 'nlp', '*']);
    expect(tenantEntry(example, 'vision')?.allowEnv).toEqual(['LD_LIBRARY_PATH']);
  });

  test('unknown fields, bad values and bad names are refused at their lines', () => {
    const bad = `tenants:
  team-a:
    sites: [local]
    qos: [platinum]
    maxGpus: 4
  Team_B:
    sites: [local]
  team-c:
    partitions: [gpu]
  team-d:
    sites: [local]
    allowEnv: [PATH, LD_PRELOAD]
`;
    expect(issuesOf(() => parseTenantPolicy(bad, 'policy.yaml'))).toEqual([
      { path: 'tenants.team-a.qos[0]', line: 4, message: expect.stringMatching(/gold.*silver.*bronze/) },
      { path: 'tenants.team-a.maxGpus', line: 5, message: 'unknown field "maxGpus"' },
      { path: 'tenants.Team_B', line: 7, message: expect.stringMatching(/a tenant name/) }, // at its entry's first line
      { path: 'tenants.team-c.sites', line: 9, message: expect.stringMatching(/expected array/) }, // required: deny by default
      { path: 'tenants.team-d.allowEnv[0]', line: 12, message: expect.stringMatching(/PATH is not refused to specs; list only names/) },
    ]);
    expect(issuesOf(() => parseTenantPolicy('tenants:\n  a:\n    sites: [local]\n  oops: 1\nextra: true\n'))).toEqual(
      expect.arrayContaining([expect.objectContaining({ message: 'unknown field "extra"' }), expect.objectContaining({ path: 'tenants.oops', line: 4 })]),
    );
    expect(issuesOf(() => parseTenantPolicy('- a\n- b\n'))[0]!.message).toMatch(/must be a mapping with a "tenants" mapping/);
    expect(issuesOf(() => parseTenantPolicy('tenants:\n  a:\n    sites: [local\n'))).toEqual([expect.objectContaining({ line: 4, message: expect.stringMatching(/Flow sequence/) })]);
  });

  test('prototype keys: "__proto__" is refused at its line, and "constructor" finds only an entry the file has', () => {
    expect(issuesOf(() => parseTenantPolicy('tenants:\n  __proto__:\n    sites: ["*"]\n'))).toEqual([{ path: 'tenants.__proto__', line: 2, message: 'a key may not be named "__proto__"' }]);
    expect(issuesOf(() => parseTenantPolicy('tenants:\n  a:\n    sites: [local]\n    partitions:\n      __proto__: [gpu]\n'))).toEqual([expect.objectContaining({ path: 'tenants.a.partitions.__proto__', line: 5 })]);
    const noStar = parseTenantPolicy('tenants:\n  a:\n    sites: [local]\n');
    for (const t of ['constructor', 'tostring', 'hasownproperty']) expect(tenantEntry(noStar, t)).toBeUndefined();
    expect(checkTenantPolicy(validatePipelineSpec({ name: 'p', tenant: 'constructor' }), noStar)).toEqual([{ path: 'tenant', message: expect.stringMatching(/tenant "constructor" is not in the tenant policy/) }]);
    const own = parseTenantPolicy('tenants:\n  constructor:\n    sites: [local]\n    partitions:\n      zurich: [gpu]\n');
    expect(tenantEntry(own, 'constructor')?.sites).toEqual(['local']);
    expect(partitionsAllowed(tenantEntry(own, 'constructor')!, 'constructor')).toBeUndefined(); // a site named like a member: not in the mapping
  });

  test('TANDEM_TENANT_POLICY: loaded by the worker and the SDK, a bad file named with its line, unset is no policy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenant-policy-'));
    const good = join(dir, 'good.yaml');
    writeFileSync(good, POLICY);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'tenants:\n  a:\n    sites: [local]\n    maxGpusPerJob: -1\n');
    expect(loadTenantPolicyConfig({})).toBeUndefined();
    expect(loadTenantPolicyConfig({ TANDEM_TENANT_POLICY: good })).toEqual({ file: good, parsed: policy });
    expect(loadWorkerConfig({ TANDEM_TENANT_POLICY: good, TANDEM_HOME: dir }).tenantPolicy?.parsed).toEqual(policy);
    expect(loadWorkerConfig({ TANDEM_HOME: dir }).tenantPolicy).toBeUndefined();
    expect(issuesOf(() => loadTenantPolicyConfig({ TANDEM_TENANT_POLICY: bad }))).toEqual([{ path: 'tenants.a.maxGpusPerJob', line: 4, message: expect.stringMatching(/>=0/) }]);
    expect(() => loadWorkerConfig({ TANDEM_TENANT_POLICY: bad, TANDEM_HOME: dir })).toThrow(`TANDEM_TENANT_POLICY=${bad} (line 4): tenants.a.maxGpusPerJob: Too small`);
    expect(() => loadTenantPolicyConfig({ TANDEM_TENANT_POLICY: join(dir, 'missing.yaml') })).toThrow(/TANDEM_TENANT_POLICY.*no such file/);
  });
});

describe('checkTenantPolicy', () => {
  test('an allowed spec has no violations', () => {
    expect(checkTenantPolicy(spec({ stages: { train: { runtime: 'local', resources: { gpusPerNode: 4 } } } }), policy)).toEqual([]);
    expect(checkTenantPolicy(spec({ stages: { train: { runtime: 'slurm', resources: { partition: 'gpu' } } } }), policy, { sites: { train: 'zurich' } })).toEqual([]);
  });

  test('every violation, with its field', () => {
    const s = spec({
      qos: 'gold',
      stages: {
        preprocess: { runtime: 'slurm' },
        train: { runtime: 'slurm', resources: { nodes: 2, gpusPerNode: 4, partition: 'bigmem' }, kubernetes: { namespace: 'team-b', serviceAccountName: 'builder' } },
        deploy: { runtime: 'kubernetes', kubernetes: { namespace: 'team-a', vllm: { model: 'org/m' } } },
      },
    });
    // env NODE_OPTIONS would be refused by the spec's schema: as a direct start could carry it, set it after validation.
    s.stages.train.env = { NODE_OPTIONS: '--require x', LD_LIBRARY_PATH: '/opt/lib', OK: '1' };
    expect(checkTenantPolicy(s, policy, { sites: { preprocess: 'zurich', train: 'zurich', deploy: 'lumi' }, tuning: { failover: { sites: ['zurich', 'lumi'] } } })).toEqual([
      { path: 'qos', message: 'tenant "team-a" may not use QoS "gold" (allowed: silver, bronze)' },
      { path: 'stages.preprocess.resources.partition', message: expect.stringMatching(/^must name a partition: tenant "team-a" may use only debug, gpu at site zurich, and a Slurm job without one goes to the site's default partition$/) },
      { path: 'stages.train.resources.partition', message: 'tenant "team-a" may not use partition "bigmem" at site zurich (allowed: debug, gpu)' },
      { path: 'stages.train.resources.gpusPerNode', message: 'tenant "team-a" may ask for at most 4 GPUs per job; this one asks for 8 (2 node(s) × 4)' },
      { path: 'stages.train.kubernetes.namespace', message: 'tenant "team-a" may not use Kubernetes namespace "team-b" (allowed: team-a)' },
      { path: 'stages.train.kubernetes.serviceAccountName', message: 'tenant "team-a" may not use service account "builder" (allowed: trainer)' },
      { path: 'stages.train.env.NODE_OPTIONS', message: expect.stringMatching(/^tenant "team-a" may not set NODE_OPTIONS .*allowed overrides: LD_LIBRARY_PATH\)$/) },
      { path: 'stages.deploy.runtime', message: 'tenant "team-a" may not use site "lumi" (runtime kubernetes runs there; allowed: local, zurich)' },
      { path: 'tuning.failover.sites[1]', message: 'tenant "team-a" may not use site "lumi" (allowed: local, zurich)' },
    ]);
  });

  test('a tenant under "*" gets its limits; a runtime pinned to local is site "local"', () => {
    expect(checkTenantPolicy(spec({ tenant: 'other', qos: 'bronze', stages: { train: { runtime: 'local' } } }), policy)).toEqual([]);
    expect(checkTenantPolicy(spec({ tenant: 'other' }), policy).map((i) => i.path)).toEqual(['qos']);
    const onlyZurich = parseTenantPolicy('tenants:\n  a:\n    sites: [zurich]\n');
    expect(checkTenantPolicy(validatePipelineSpec({ name: 'p', tenant: 'a', stages: { train: { runtime: 'local' } } }), onlyZurich)).toEqual([
      { path: 'stages.train.runtime', message: 'tenant "a" may not use site "local" (runtime local runs there; allowed: zurich)' },
    ]);
    expect(checkTenantPolicy(validatePipelineSpec({ name: 'p', tenant: 'a' }), parseTenantPolicy('tenants:\n  a:\n    sites: ["*"]\n'), { sites: { train: 'anywhere' } })).toEqual([]);
  });

  test('is deterministic and does not modify the spec', () => {
    const s = spec({ qos: 'gold' });
    const before = JSON.stringify(s);
    expect(checkTenantPolicy(s, policy)).toEqual(checkTenantPolicy(s, policy));
    expect(JSON.stringify(s)).toBe(before);
  });
});

describe('validateSpecUnderPolicy', () => {
  const input = (env: Record<string, string>, tenant = 'team-a') => ({ name: 'p', tenant, stages: { train: { env } } });

  test('a variable the tenant may set passes the deny-list, in its place; other refused names still fail', () => {
    expect(validateSpecUnderPolicy(input({ A: '1', LD_LIBRARY_PATH: '/opt/lib', B: '2' }), policy).stages.train.env).toEqual({ A: '1', LD_LIBRARY_PATH: '/opt/lib', B: '2' });
    expect(Object.keys(validateSpecUnderPolicy(input({ A: '1', LD_LIBRARY_PATH: '/opt/lib', B: '2' }), policy).stages.train.env!)).toEqual(['A', 'LD_LIBRARY_PATH', 'B']);
    expect(issuesOf(() => validateSpecUnderPolicy(input({ LD_PRELOAD: '/x.so' }), policy))).toEqual([expect.objectContaining({ path: 'stages.train.env.LD_PRELOAD', message: expect.stringMatching(/may not be set by a pipeline spec/) })]);
    // Another tenant, or no policy: refused as always.
    expect(issuesOf(() => validateSpecUnderPolicy(input({ LD_LIBRARY_PATH: '/opt/lib' }, 'other'), policy)).map((i) => i.path)).toEqual(['stages.train.env.LD_LIBRARY_PATH']);
    expect(issuesOf(() => validateSpecUnderPolicy(input({ LD_LIBRARY_PATH: '/opt/lib' }), undefined)).map((i) => i.path)).toEqual(['stages.train.env.LD_LIBRARY_PATH']);
  });

  test("an allowed variable's value still gets every check, named by its own name", () => {
    expect(issuesOf(() => validateSpecUnderPolicy(input({ LD_LIBRARY_PATH: 'a\0b' }), policy))).toEqual([expect.objectContaining({ path: 'stages.train.env.LD_LIBRARY_PATH', message: expect.stringMatching(/NUL byte/) })]);
    // A name of the stand-ins' form that the user chose is kept as it is.
    expect(validateSpecUnderPolicy(input({ TANDEM_POLICY_ALLOWED_0: 'mine', LD_LIBRARY_PATH: '/opt/lib' }), policy).stages.train.env).toEqual({ TANDEM_POLICY_ALLOWED_0: 'mine', LD_LIBRARY_PATH: '/opt/lib' });
  });
});

describe('parseSpecUnderPolicy (spec files: `tandem run`, loadPipelineSpec)', () => {
  const file = (tenant: string, env: string) => `name: p\ntenant: ${tenant}\nstages:\n  train:\n    env:\n${env}`;

  test('an allowed variable passes; any other problem is reported at its line as before', () => {
    expect(parseSpecUnderPolicy(file('team-a', '      LD_LIBRARY_PATH: /opt/lib\n'), policy, 'p.yaml').stages.train.env).toEqual({ LD_LIBRARY_PATH: '/opt/lib' });
    expect(issuesOf(() => parseSpecUnderPolicy(file('other', '      LD_LIBRARY_PATH: /opt/lib\n'), policy, 'p.yaml'))).toEqual([expect.objectContaining({ path: 'stages.train.env.LD_LIBRARY_PATH', line: 6 })]);
    expect(issuesOf(() => parseSpecUnderPolicy(file('team-a', '      LD_LIBRARY_PATH: /opt/lib\n      LD_PRELOAD: /x.so\n'), policy, 'p.yaml'))).toEqual([expect.objectContaining({ path: 'stages.train.env.LD_PRELOAD', line: 7 })]);
    expect(issuesOf(() => parseSpecUnderPolicy(file('team-a', '      LD_LIBRARY_PATH: /opt/lib\n') + 'bogus: 1\n', policy, 'p.yaml'))).toEqual([expect.objectContaining({ path: 'bogus', line: 7 })]);
    expect(issuesOf(() => parseSpecUnderPolicy(file('team-a', '      LD_LIBRARY_PATH: /opt/lib\n'), undefined, 'p.yaml')).map((i) => i.path)).toEqual(['stages.train.env.LD_LIBRARY_PATH']);
    expect(issuesOf(() => parseSpecUnderPolicy(file('team-a', '      LD_LIBRARY_PATH: /opt/lib\n      A: x\n      A: y\n'), policy, 'p.yaml'))).toEqual([expect.objectContaining({ path: 'stages.train.env.A', line: 8, message: expect.stringMatching(/unique/) })]);
  });
});

describe("the worker's placement view (activities/tenant-policy.ts)", () => {
  const node = (id: string) => ({ id, cpus: 8, gpus: 0, memoryMB: 1024 });
  const inventory = {
    sites: [
      { name: 'local', clusters: [{ name: 'h', partitions: [{ name: 'local', nodes: [node('h')] }] }] },
      { name: 'zurich', clusters: [{ name: 'z', partitions: [{ name: 'gpu', nodes: [node('z1')] }, { name: 'bigmem', nodes: [node('z2')] }] }] },
      { name: 'lumi', clusters: [{ name: 'l', partitions: [{ name: 'gpu', nodes: [node('l1')] }] }] },
    ],
  };
  const guard = new TenantGuard(policy, () => undefined);

  test("only the tenant's sites, and at each only its partitions", () => {
    const names = (inv: { sites: { name: string; clusters: { partitions: { name: string }[] }[] }[] }) => inv.sites.map((s) => `${s.name}:${s.clusters.flatMap((c) => c.partitions.map((p) => p.name)).join('+')}`);
    expect(names(guard.restrict(inventory, 'team-a'))).toEqual(['local:local', 'zurich:gpu']); // local: the mapping does not restrict it
    expect(names(guard.restrict(inventory, 'someone'))).toEqual(['local:local']); // "*": local, any partition
    expect(names(new TenantGuard(parseTenantPolicy('tenants:\n  a:\n    sites: [local]\n'), () => undefined).restrict(inventory, 'b'))).toEqual([]);
    expect(guard.allowedSites('team-a', ['lumi', 'zurich', 'local'])).toEqual(['zurich', 'local']);
  });

  test('outside a pipeline run (no activity context) nothing is checked', async () => {
    await expect(guard.enforce()).resolves.toBeUndefined();
  });
});
