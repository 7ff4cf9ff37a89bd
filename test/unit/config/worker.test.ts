// The configuration boundary (config/worker.ts): defaults, every variable parsed, and one ConfigError
// that lists every problem, naming the variable, or the file and its line.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_VARIABLES, loadCliConfig, loadClientConfig, loadClusterConfig, loadToolConfig, loadWorkerConfig } from '../../../config/worker.js';
import { DEFAULTS } from '../../../config/defaults.js';
import { InputError } from '../../../contract/input-error.js';
import { configError } from '../config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-config-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const SITES = `sites:
  - name: zurich
    api: firecrest
    url: https://fc.example/v2
    tokenUrl: https://auth.example/token
    clientId: tandem
    clientSecretEnv: ZURICH_SECRET
    workDir: /scratch/tandem
  - name: lugano
    api: slurmrestd
    socket: /run/slurmrestd.socket
    workDir: /scratch/lugano
`;
const QUOTAS = 'quotas:\n  zurich:\n    acme: {gpus: 4}\n';

describe('defaults', () => {
  test('an empty environment gives every default', () => {
    const c = loadWorkerConfig({}, { cwd: '/srv' });
    expect(c).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'tandem',
      connection: { address: '127.0.0.1:7233' },
      home: '/srv/.tandem',
      argoSchemaFile: DEFAULTS.argoSchemaFile,
      kubernetes: { cluster: undefined, namespace: undefined, stepImage: undefined, vllmImage: undefined, serviceType: 'ClusterIP' },
      migration: { slurmSites: {}, kubernetesSites: {} },
      slurm: undefined,
      sites: undefined,
      quotas: undefined,
      codec: undefined,
      audit: { file: '/srv/.tandem/audit.jsonl', operator: undefined, keyFile: '/srv/.tandem/keys/audit.key' },
      observe: { metrics: undefined, metricsHost: '127.0.0.1', logFormat: 'text', logLevel: undefined },
      slots: { maxActivities: DEFAULTS.workerMaxActivities, maxWatches: DEFAULTS.workerMaxWatches, maxWorkflowTasks: DEFAULTS.workerMaxWorkflowTasks, maxCachedWorkflows: DEFAULTS.workerMaxCachedWorkflows },
      localIsolation: 'auto',
    });
    expect(loadClientConfig({})).toEqual({ address: DEFAULTS.temporalAddress, namespace: DEFAULTS.namespace, taskQueue: DEFAULTS.taskQueue, connection: { address: DEFAULTS.temporalAddress } });
    expect(loadToolConfig({})).toEqual({ temporalCli: undefined, cacheDir: join(homedir(), '.cache', 'tandem') });
    // The Temporal CLI the package builds goes to the user's cache (XDG), never into node_modules.
    expect(loadToolConfig({ XDG_CACHE_HOME: '/var/cache/u' }).cacheDir).toBe('/var/cache/u/tandem');
    expect(loadToolConfig({ XDG_CACHE_HOME: 'relative' }).cacheDir).toBe(join(homedir(), '.cache', 'tandem'));
  });

  test('an empty variable counts as unset', () => {
    expect(loadWorkerConfig({ TEMPORAL_ADDRESS: '', TANDEM_HOME: '', TANDEM_SITES_FILE: '', TANDEM_SLURM_API: '' }, { cwd: '/srv' })).toMatchObject({ address: '127.0.0.1:7233', home: '/srv/.tandem', sites: undefined, slurm: undefined });
  });

  test('other variables are ignored', () => {
    expect(loadClientConfig({ PATH: '/bin', TANDEM_WHATEVER: 'x' })).toEqual(loadClientConfig({}));
  });
});

describe('every variable parsed', () => {
  test('the worker slots: how much work a worker takes at once (its memory bound)', () => {
    expect(loadWorkerConfig({ TANDEM_WORKER_MAX_ACTIVITIES: '20', TANDEM_WORKER_MAX_WATCHES: '50', TANDEM_WORKER_MAX_WORKFLOW_TASKS: '10', TANDEM_WORKER_MAX_CACHED_WORKFLOWS: '300' }).slots).toEqual({ maxActivities: 20, maxWatches: 50, maxWorkflowTasks: 10, maxCachedWorkflows: 300 });
    expect(loadWorkerConfig({}).slots).toMatchObject({ maxActivities: 100, maxWatches: 500 });
    // Temporal refuses more concurrent workflow tasks than cached workflows: capped, not an error.
    expect(loadWorkerConfig({ TANDEM_WORKER_MAX_CACHED_WORKFLOWS: '8' }).slots).toMatchObject({ maxWorkflowTasks: 8, maxCachedWorkflows: 8 });
    for (const bad of ['0', '1', 'many', '2.5', '-3']) expect(() => loadWorkerConfig({ TANDEM_WORKER_MAX_ACTIVITIES: bad })).toThrow(/TANDEM_WORKER_MAX_ACTIVITIES/);
    expect(() => loadWorkerConfig({ TANDEM_WORKER_MAX_WATCHES: 'lots' })).toThrow(/TANDEM_WORKER_MAX_WATCHES/);
  });

  test('client, home and the Argo schema', () => {
    const schema = file('schema.json', '{}');
    const env = { TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'prod', TANDEM_TASK_QUEUE: 'tandem-gpu', TANDEM_HOME: 'state', TANDEM_ARGO_SCHEMA: schema };
    expect(loadCliConfig(env, { cwd: '/srv' })).toEqual({ address: 'temporal.example:7233', namespace: 'prod', taskQueue: 'tandem-gpu', connection: { address: 'temporal.example:7233' }, home: '/srv/state', argoSchemaFile: schema });
    expect(loadClientConfig({ TEMPORAL_ADDRESS: '[::1]:7233' }).address).toBe('[::1]:7233');
  });

  test('Slurm through FirecREST', () => {
    const env = { TANDEM_SLURM_API: 'firecrest', TANDEM_SLURM_SITE: 'alps', TANDEM_SLURM_WORKDIR: '/scratch/me', TANDEM_SLURM_STATUS_INTERVAL_MS: '300', TANDEM_FIRECREST_URL: 'https://fc.example/v2', TANDEM_FIRECREST_SYSTEM: 'daint', TANDEM_FIRECREST_TOKEN_URL: 'https://auth.example/token', TANDEM_FIRECREST_CLIENT_ID: 'id', TANDEM_FIRECREST_CLIENT_SECRET: 'secret' };
    expect(loadWorkerConfig(env).slurm).toEqual({ api: 'firecrest', site: 'alps', workDir: '/scratch/me', statusIntervalMs: 300, url: 'https://fc.example/v2', system: 'daint', tokenUrl: 'https://auth.example/token', clientId: 'id', clientSecret: 'secret' });
  });

  test('Slurm through slurmrestd, with its defaults', () => {
    expect(loadWorkerConfig({ TANDEM_SLURM_API: 'slurmrestd', TANDEM_SLURM_WORKDIR: '/w', TANDEM_SLURMRESTD_SOCKET: '/run/s.sock' }).slurm).toEqual({ api: 'slurmrestd', site: 'slurm', workDir: '/w', statusIntervalMs: undefined, socket: '/run/s.sock', url: undefined, user: undefined, token: undefined, apiVersion: '0.0.38' });
    const jwt = { TANDEM_SLURM_API: 'slurmrestd', TANDEM_SLURM_WORKDIR: '/w', TANDEM_SLURMRESTD_URL: 'http://slurm:6820', TANDEM_SLURMRESTD_USER: 'me', TANDEM_SLURMRESTD_TOKEN: 'jwt', TANDEM_SLURMRESTD_API_VERSION: '0.0.38' };
    expect(loadWorkerConfig(jwt).slurm).toMatchObject({ url: 'http://slurm:6820', user: 'me', token: 'jwt', apiVersion: '0.0.38' });
  });

  test('Kubernetes and migration sites', () => {
    const env = { KUBECONFIG: '/k/config', TANDEM_K8S_NAMESPACE: 'ml', TANDEM_K8S_SITE: 'alps-k8s', TANDEM_K8S_STEP_IMAGE: 'steps:1', TANDEM_K8S_VLLM_IMAGE: 'vllm:1', TANDEM_K8S_SERVICE_TYPE: 'LoadBalancer', TANDEM_K8S_MIGRATION_NODE_SELECTOR: 'pool=x', TANDEM_SLURM_SITES: 'zurich=/etc/z.conf, lugano=/etc/l.conf', TANDEM_K8S_SITES: 'k8s-a=/k/a,k8s-b' };
    expect(loadClusterConfig(env)).toEqual({
      kubernetes: { cluster: { kubeconfigPath: '/k/config' }, namespace: 'ml', site: 'alps-k8s', stepImage: 'steps:1', vllmImage: 'vllm:1', serviceType: 'LoadBalancer' },
      migration: {
        slurmSites: { zurich: '/etc/z.conf', lugano: '/etc/l.conf' },
        kubernetesSites: { 'k8s-a': { kubeconfigPath: '/k/a', namespace: 'ml', nodeSelector: 'pool=x' }, 'k8s-b': { kubeconfigPath: '/k/config', namespace: 'ml', nodeSelector: 'pool=x' } },
      },
    });
    // In a pod: no kubeconfig, the in-cluster service account.
    expect(loadClusterConfig({ KUBERNETES_SERVICE_HOST: '127.0.0.1' }).kubernetes.cluster).toEqual({ kubeconfigPath: undefined });
    expect(loadWorkerConfig(env).migration).toEqual(loadClusterConfig(env).migration);
    // The site name quotas and tenant policies use; unset, the apiserver's host:port (KubernetesJobBackend, kubernetesSource).
    expect(loadClusterConfig({ KUBECONFIG: '/k/config' }).kubernetes.site).toBeUndefined();
    expect(() => loadClusterConfig({ KUBECONFIG: '/k/config', TANDEM_K8S_SITE: 'my site' })).toThrow(/TANDEM_K8S_SITE.*must be a site name/s);
  });

  test('the sites file, with the secrets it names, and the quotas file', () => {
    const sites = file('sites.yaml', SITES);
    const quotas = file('quotas.yaml', QUOTAS);
    const c = loadWorkerConfig({ TANDEM_SITES_FILE: sites, TANDEM_QUOTAS_FILE: quotas, ZURICH_SECRET: 's3cret', UNRELATED: 'x' });
    expect(c.sites).toMatchObject({ file: sites, secrets: { ZURICH_SECRET: 's3cret' } });
    expect(c.sites!.parsed.sites.map((s) => s.name)).toEqual(['zurich', 'lugano']);
    expect(c.quotas).toMatchObject({ file: quotas, parsed: { quotas: { zurich: { acme: { gpus: 4 } } } } });
  });

  test('TEMPORAL_CLI', () => {
    const bin = file('temporal', '#!/bin/sh\n');
    chmodSync(bin, 0o755);
    expect(loadToolConfig({ TEMPORAL_CLI: bin })).toMatchObject({ temporalCli: bin });
    chmodSync(bin, 0o644);
    expect(configError(() => loadToolConfig({ TEMPORAL_CLI: bin })).message).toContain(`TEMPORAL_CLI=${bin}: not executable`);
  });

  test('CONFIG_VARIABLES lists what the loaders read', () => {
    expect(CONFIG_VARIABLES).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'TANDEM_HOME', 'TANDEM_SITES_FILE', 'TANDEM_QUOTAS_FILE', 'TANDEM_ARGO_SCHEMA', 'TANDEM_SLURM_API', 'TANDEM_K8S_SITES', 'TEMPORAL_CLI']));
  });
});

describe('one message listing every problem', () => {
  test('several bad variables, each on its own line, with no secret printed', () => {
    const e = configError(() =>
      loadWorkerConfig({
        TEMPORAL_ADDRESS: 'localhost',
        TANDEM_TASK_QUEUE: 'two words',
        TANDEM_SITES_FILE: '/nonexistent/sites.yaml',
        TANDEM_SLURM_API: 'firecrest',
        TANDEM_FIRECREST_URL: 'ftp://fc',
        TANDEM_FIRECREST_CLIENT_SECRET: 'hunter2',
        TANDEM_SLURM_STATUS_INTERVAL_MS: 'soon',
        TANDEM_K8S_SERVICE_TYPE: 'NodePort',
        TANDEM_SLURM_SITES: 'zurich',
      }),
    );
    expect(e).toBeInstanceOf(InputError);
    expect(e.message.split('\n')).toEqual([
      'tandem: invalid configuration:',
      expect.stringMatching(/^ {2}TEMPORAL_ADDRESS=localhost: must be host:port/),
      '  TANDEM_TASK_QUEUE=two words: must not contain whitespace',
      '  TANDEM_K8S_SERVICE_TYPE=NodePort: must be ClusterIP or LoadBalancer',
      '  TANDEM_SLURM_STATUS_INTERVAL_MS=soon: must be a whole number of milliseconds',
      '  TANDEM_FIRECREST_URL=ftp://fc: must be an http or https URL, not ftp:',
      '  TANDEM_SITES_FILE=/nonexistent/sites.yaml: no such file',
      '  TANDEM_SLURM_SITES=zurich: entry "zurich" must look like site=/path/to/slurm.conf',
      '  TANDEM_SLURM_WORKDIR: must be set when TANDEM_SLURM_API=firecrest',
      '  TANDEM_FIRECREST_SYSTEM: must be set when TANDEM_SLURM_API=firecrest',
      '  TANDEM_FIRECREST_TOKEN_URL: must be set when TANDEM_SLURM_API=firecrest',
      '  TANDEM_FIRECREST_CLIENT_ID: must be set when TANDEM_SLURM_API=firecrest',
    ]);
    expect(e.message).not.toContain('hunter2');
    expect(e.issues).toHaveLength(11);
  });

  test('slurmrestd needs a socket or a URL; an unsupported API version is named', () => {
    const e = configError(() => loadWorkerConfig({ TANDEM_SLURM_API: 'slurmrestd', TANDEM_SLURM_WORKDIR: '/w', TANDEM_SLURMRESTD_API_VERSION: '0.0.40' }));
    expect(e.message).toContain('TANDEM_SLURMRESTD_API_VERSION=0.0.40: must be one of 0.0.38');
    expect(e.message).toContain('TANDEM_SLURMRESTD_SOCKET or TANDEM_SLURMRESTD_URL: must be set when TANDEM_SLURM_API=slurmrestd');
  });

  test('the client loader looks at its own variables only', () => {
    expect(() => loadClientConfig({ TANDEM_SITES_FILE: '/nonexistent', TANDEM_SLURM_API: 'nope' })).not.toThrow();
    expect(configError(() => loadClientConfig({ TEMPORAL_ADDRESS: 'h:99999', TEMPORAL_NAMESPACE: ' ' })).issues.map((i) => i.source)).toEqual(['TEMPORAL_ADDRESS=h:99999', 'TEMPORAL_NAMESPACE= ']);
  });
});

describe('file errors name the file and line', () => {
  test('a bad sites file: every field with its line, under the variable and file', () => {
    const sites = file('bad-sites.yaml', 'sites:\n  - name: Zurich\n    api: firecrest\n    url: not-a-url\n    tokenUrl: https://auth.example/token\n    clientId: tandem\n    clientSecretEnv: ZURICH_SECRET\n    workDir: /scratch\n');
    const quotas = file('bad-quotas.yaml', 'quotas:\n  zurich:\n    acme: {gpus: -1}\n');
    const e = configError(() => loadWorkerConfig({ TANDEM_SITES_FILE: sites, TANDEM_QUOTAS_FILE: quotas, TEMPORAL_ADDRESS: 'x' }));
    const lines = e.message.split('\n');
    expect(lines[0]).toBe('tandem: invalid configuration:');
    expect(lines).toContain(`  TANDEM_SITES_FILE=${sites} (line 2): sites[0].name: a site name is lower-case letters, digits and dashes`);
    expect(lines).toContain(`  TANDEM_SITES_FILE=${sites} (line 4): sites[0].url: Invalid URL`);
    expect(lines.some((l) => l.startsWith(`  TANDEM_QUOTAS_FILE=${quotas} (line 3): quotas.zurich.acme.gpus`))).toBe(true);
    expect(lines.some((l) => l.startsWith('  TEMPORAL_ADDRESS=x:'))).toBe(true);
  });

  test('a file that does not parse, a directory, and a secret the sites file names but nobody set', () => {
    const broken = file('broken.yaml', 'sites: [\n');
    expect(configError(() => loadWorkerConfig({ TANDEM_SITES_FILE: broken })).message).toMatch(new RegExp(`TANDEM_SITES_FILE=${broken}( \\(line \\d+\\))?: `));
    expect(configError(() => loadWorkerConfig({ TANDEM_QUOTAS_FILE: dir })).message).toContain(`TANDEM_QUOTAS_FILE=${dir}: not a file`);
    const sites = file('sites.yaml', SITES);
    expect(configError(() => loadWorkerConfig({ TANDEM_SITES_FILE: sites })).message).toBe(`tandem: invalid configuration:\n  TANDEM_SITES_FILE=${sites}: site zurich: clientSecretEnv names the environment variable ZURICH_SECRET, which is not set`);
  });

  test('a missing Argo schema', () => {
    expect(configError(() => loadCliConfig({ TANDEM_ARGO_SCHEMA: '/nonexistent/schema.json' })).message).toBe('tandem: invalid configuration:\n  TANDEM_ARGO_SCHEMA=/nonexistent/schema.json: no such file');
  });
});

describe("Temporal's environment configuration (envconfig)", () => {
  const toml = file('temporal.toml', '[profile.default]\naddress = "default.example:7233"\n[profile.prod]\naddress = "prod.example:7233"\nnamespace = "ml"\napi_key = "sekrit-key-123"\n[profile.prod.grpc_meta]\nx-team = "vision"\n[profile.bad]\naddress = "no-port"\n');

  test('the default profile, a named profile, and TEMPORAL_* over it', () => {
    expect(loadClientConfig({ TEMPORAL_CONFIG_FILE: toml }).address).toBe('default.example:7233');
    const prod = loadClientConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'prod' });
    expect(prod).toMatchObject({ address: 'prod.example:7233', namespace: 'ml', connection: { address: 'prod.example:7233', apiKey: 'sekrit-key-123', metadata: { 'x-team': 'vision' } } });
    // An API key implies TLS (Temporal Cloud), as in Temporal's own SDKs.
    expect(prod.connection.tls).toBe(true);
    expect(loadClientConfig({ TEMPORAL_CONFIG_FILE: toml }, { profile: 'prod' }).namespace).toBe('ml');
    expect(loadClientConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'prod', TEMPORAL_ADDRESS: 'other:1', TEMPORAL_TLS: 'true', TEMPORAL_GRPC_META_X_TEAM: '' }).connection).toEqual({ address: 'other:1', apiKey: 'sekrit-key-123', tls: { clientCertPair: undefined, serverNameOverride: undefined, serverRootCACertificate: undefined } });
  });

  test("a missing profile, a profile's bad address, a bad TEMPORAL_TLS: each named; the key never shown", () => {
    expect(configError(() => loadClientConfig({ TEMPORAL_CONFIG_FILE: toml }, { profile: 'nope' })).issues).toEqual([expect.objectContaining({ source: `TEMPORAL_CONFIG_FILE=${toml} (profile nope)`, message: "Profile 'nope' not found in config data" })]);
    expect(configError(() => loadClientConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'bad' })).issues).toEqual([expect.objectContaining({ path: 'address', message: '"no-port" must be host:port' })]);
    const e = configError(() => loadClientConfig({ TEMPORAL_TLS: 'yes', TEMPORAL_API_KEY: 'sekrit-key-123', TEMPORAL_CONFIG_FILE: '/nonexistent.toml' }));
    expect(e.issues.map((i) => i.source)).toEqual(['TEMPORAL_CONFIG_FILE=/nonexistent.toml', 'TEMPORAL_TLS=yes']);
    expect(e.message).not.toContain('sekrit');
  });

  test('no file, no variables: the local default, plain text', () => {
    expect(loadClientConfig({ HOME: '/nonexistent' }).connection).toEqual({ address: DEFAULTS.temporalAddress });
  });
});
