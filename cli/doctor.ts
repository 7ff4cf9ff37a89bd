// `tandem doctor`: checks, one line each, everything a Tandem deployment depends on — the
// configuration, the Temporal connection (TLS, namespace, search attributes, workers polling), every
// configured Slurm site (FirecREST token and scheduler, slurmrestd ping and partitions) and Kubernetes
// access (namespace, the RBAC verbs Tandem needs) — and says what to fix. Exit 1 if any check fails.
import { workerCommand } from '../sdk/command-hint.js';
import type { Command } from 'commander';
import type { Connectors } from './connectors.js';
import type { WorkerConfig } from '../config/worker.js';
import { withTimeout } from '../backends/timeout.js';
import { missingNamespace } from '../sdk/namespace.js';
import { examples } from './help.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

const TIMEOUT_MS = 10_000;

/** A check that hangs (a firewalled address) fails instead of stalling the report. */
const bounded = <T>(what: string, fn: () => Promise<T>, ms = TIMEOUT_MS): Promise<T> => withTimeout(fn(), ms, what);

const message = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0]!;

/** How recent a poller's last access must be to count as a live worker (a long poll lasts up to ~70 s). */
export const LIVE_POLLER_MS = 90_000;

interface Poller {
  identity?: string | null;
  lastAccessTime?: { seconds?: number | Long | string | null; nanos?: number | null } | null;
}
type Long = { toNumber(): number };

/**
 * The pollers that are live workers: the server lists every poller of the last minutes, exited
 * workers too, so only those whose last access is within `windowMs` of `now` count.
 */
export function livePollers<P extends Poller>(pollers: P[], now = Date.now(), windowMs = LIVE_POLLER_MS): P[] {
  return pollers.filter((p) => {
    const s = p.lastAccessTime?.seconds;
    if (s === undefined || s === null) return false;
    const secs = typeof s === 'object' ? s.toNumber() : Number(s);
    return now - (secs * 1000 + (p.lastAccessTime?.nanos ?? 0) / 1e6) <= windowMs;
  });
}

export async function temporalChecks(c: Connectors, taskQueue: string): Promise<Check[]> {
  const t = c.target?.();
  const where = t ? `${t.address}${t.connection.tls ? ' (TLS' + (typeof t.connection.tls === 'object' && t.connection.tls.clientCertPair ? ', mTLS' : '') + ')' : ''}${t.connection.apiKey ? ' with API key' : ''}` : 'Temporal';
  let client;
  try {
    client = await bounded('connect', () => c.connect());
  } catch (e) {
    const m = message(e);
    // A server that wants TLS or a client certificate answers a plain or certificate-less client with
    // a timeout or a handshake error only: say what it likely wants.
    const hint = !t?.connection.tls ? ' (if the server requires TLS, set TEMPORAL_TLS=true or the profile\'s tls section)' : typeof t.connection.tls === 'object' && !t.connection.tls.clientCertPair ? ' (if the server requires a client certificate — mTLS —, set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)' : '';
    return [{ name: 'temporal', ok: false, detail: `cannot connect to ${where}: ${m}${/deadline|handshake|certificate|tls|ssl/i.test(m) ? hint : ''}`, fix: 'check TEMPORAL_ADDRESS / --address, TLS (TEMPORAL_TLS_*: server CA, server name, client certificate) and TEMPORAL_API_KEY, or the temporal.toml profile (--profile)' }];
  }
  const out: Check[] = [];
  try {
    const ns = client.namespace;
    const svc = client.client.workflowService;
    try {
      const info = await bounded('namespace', () => svc.describeNamespace({ namespace: ns }));
      out.push({ name: 'temporal', ok: true, detail: `connected to ${where}, namespace ${ns} (${info.namespaceInfo?.state === 1 ? 'registered' : `state ${info.namespaceInfo?.state}`})` });
    } catch (e) {
      out.push({ name: 'temporal', ok: false, detail: missingNamespace(e) !== undefined ? `connected to ${where}, but namespace ${ns} does not exist on it` : `connected to ${where}, but namespace ${ns}: ${message(e)}`, fix: `create it (temporal operator namespace create ${ns}) or set TEMPORAL_NAMESPACE / --namespace` });
      return out;
    }
    try {
      const { TANDEM_SEARCH_ATTRIBUTES } = await import('../contract/search-attributes.js');
      const have = (await bounded('search attributes', () => client.client.connection.operatorService.listSearchAttributes({ namespace: ns }))).customAttributes ?? {};
      const missing = TANDEM_SEARCH_ATTRIBUTES.filter((a) => !(a.name in have)).map((a) => a.name);
      out.push(missing.length ? { name: 'search attributes', ok: false, detail: `missing ${missing.join(', ')}`, fix: 'run `tandem setup` once (or register them as Keyword where the namespace is managed, e.g. Temporal Cloud)' } : { name: 'search attributes', ok: true, detail: `all ${TANDEM_SEARCH_ATTRIBUTES.length} registered` });
    } catch (e) {
      out.push({ name: 'search attributes', ok: false, detail: `cannot list them: ${message(e)}`, fix: 'the identity may lack the right to read them; check them where the namespace is managed' });
    }
    try {
      const q = await bounded('task queue', () => svc.describeTaskQueue({ namespace: ns, taskQueue: { name: taskQueue }, taskQueueType: 1 /* WORKFLOW */ }));
      const all = q.pollers ?? [];
      const pollers = livePollers(all);
      const gone = all.length - pollers.length;
      out.push(pollers.length ? { name: 'workers', ok: true, detail: `${pollers.length} worker(s) polling task queue ${taskQueue} (${[...new Set(pollers.map((p) => p.identity))].slice(0, 3).join(', ')})${gone ? `; ${gone} more polled earlier and stopped` : ''}` } : { name: 'workers', ok: false, detail: `no worker polls task queue ${taskQueue}${gone ? ` (${gone} polled in the last minutes and stopped)` : ''}`, fix: `start one (\`${workerCommand()}\`, or a worker with the TandemPlugin) on this task queue, or set TANDEM_TASK_QUEUE / --task-queue` });
    } catch (e) {
      out.push({ name: 'workers', ok: false, detail: `cannot describe task queue ${taskQueue}: ${message(e)}` });
    }
  } finally {
    await client.close();
  }
  return out;
}

export async function siteChecks(config: WorkerConfig): Promise<Check[]> {
  const out: Check[] = [];
  const { slurmBackend } = await import('../backends/slurm/index.js');
  const { FirecrestJobBackend } = await import('../backends/slurm/firecrest-backend.js');
  const { SlurmrestdJobBackend } = await import('../backends/slurm/slurmrestd-backend.js');
  if (config.slurm) {
    const name = `slurm ${config.slurm.site}`;
    const b = slurmBackend(config.slurm);
    try {
      if (b instanceof FirecrestJobBackend) {
        const parts = (await bounded('FirecREST', () => b.client.partitions(b.system))) as { partitions?: { name: string }[] };
        out.push({ name, ok: true, detail: `FirecREST token ok, system ${b.system}, partitions ${(parts.partitions ?? []).map((p) => p.name).join(', ') || '(none)'}` });
      } else if (b instanceof SlurmrestdJobBackend) {
        await bounded('slurmrestd', () => b.client.ping());
        const nodes = await bounded('slurmrestd', () => b.client.nodes());
        const partitions = [...new Set(nodes.flatMap((n) => (n as { partitions?: string[] }).partitions ?? []))];
        out.push({ name, ok: true, detail: `slurmrestd ping ok, ${nodes.length} node(s), partitions ${partitions.join(', ') || '(none)'}` });
      }
    } catch (e) {
      out.push({ name, ok: false, detail: message(e), fix: config.slurm.api === 'firecrest' ? 'check TANDEM_FIRECREST_URL, the token endpoint and client credentials (TANDEM_FIRECREST_TOKEN_URL, _CLIENT_ID, _CLIENT_SECRET) and TANDEM_FIRECREST_SYSTEM' : 'check TANDEM_SLURMRESTD_SOCKET / _URL, the token (TANDEM_SLURMRESTD_TOKEN, scontrol token) and TANDEM_SLURMRESTD_API_VERSION' });
    }
  }
  if (config.sites) {
    const { recoverySites } = await import('../activities/recovery-sites.js');
    for (const site of recoverySites(config.sites.parsed, config.sites.secrets)) {
      try {
        const h = await bounded(site.name, () => site.health());
        out.push({ name: `site ${site.name}`, ok: h.healthy, detail: h.detail, fix: h.healthy ? undefined : `see the site's entry in ${config.sites.file}` });
      } catch (e) {
        out.push({ name: `site ${site.name}`, ok: false, detail: message(e), fix: `check the site's url/socket and credentials in ${config.sites.file}` });
      }
    }
  }
  return out;
}

/** The verbs Tandem needs in its namespace (Jobs for stages and Argo pods, Deployments + Services for serving). */
const NEEDED: { group: string; resource: string; verbs: string[] }[] = [
  { group: 'batch', resource: 'jobs', verbs: ['create', 'get', 'list', 'delete'] },
  { group: '', resource: 'pods', verbs: ['get', 'list'] },
  { group: '', resource: 'pods/log', verbs: ['get'] },
  { group: 'apps', resource: 'deployments', verbs: ['create', 'get', 'patch', 'delete'] },
  { group: 'apps', resource: 'replicasets', verbs: ['list'] },
  { group: '', resource: 'services', verbs: ['create', 'get', 'delete'] },
];

export async function kubernetesChecks(config: WorkerConfig): Promise<Check[]> {
  if (!config.kubernetes.cluster) return [{ name: 'kubernetes', ok: true, detail: 'not configured (no KUBECONFIG, not in a pod): stages with runtime kubernetes are refused' }];
  const { KubeClients } = await import('../backends/kubernetes/client.js');
  const { AuthorizationV1Api } = await import('@kubernetes/client-node');
  const k = new KubeClients({ kubeconfigPath: config.kubernetes.cluster.kubeconfigPath, namespace: config.kubernetes.namespace });
  const ns = k.namespace;
  // SelfSubjectAccessReviews are open to every authenticated identity, so they also tell whether the
  // cluster is reachable and the credentials work.
  const authz = k.kc.makeApiClient(AuthorizationV1Api);
  const denied: string[] = [];
  try {
    for (const n of NEEDED) {
      for (const verb of n.verbs) {
        const [resource, subresource] = n.resource.split('/');
        const r = await bounded('kubernetes RBAC', () => authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { namespace: ns, group: n.group, resource, subresource, verb } } } }));
        if (!r.status?.allowed) denied.push(`${verb} ${n.resource}`);
      }
    }
  } catch (e) {
    return [{ name: 'kubernetes', ok: false, detail: `cannot ask the cluster: ${message(e)}`, fix: 'check KUBECONFIG (server, CA, credentials) or the pod\'s ServiceAccount token' }];
  }
  // Whether the namespace exists: a worker's Role does not cover reading Namespace objects, so only a
  // definite 404 counts.
  const missing = await k.core.readNamespace({ name: ns }).then(() => false, (e: unknown) => (e as { code?: number }).code === 404);
  if (missing) return [{ name: 'kubernetes', ok: false, detail: `namespace ${ns} does not exist`, fix: `create it (kubectl create namespace ${ns}) or set TANDEM_K8S_NAMESPACE` }];
  return [denied.length ? { name: 'kubernetes', ok: false, detail: `namespace ${ns}: not allowed to ${denied.join(', ')}`, fix: `grant the worker's identity a Role in ${ns} with these verbs (templates/kubernetes/worker-rbac.yaml)` } : { name: 'kubernetes', ok: true, detail: `namespace ${ns}: every verb Tandem needs is allowed` }];
}

export function formatCheck(c: Check): string {
  return `${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(18)} ${c.detail}${c.fix ? `\n      fix: ${c.fix}` : ''}`;
}

export function registerDoctorCommand(program: Command, c: Connectors): void {
  program
    .command('doctor')
    .description('check the Temporal connection, every configured site and Kubernetes access; one line each with what to fix')
    .option('--json', 'print the checks as JSON')
    .addHelpText('after', examples('tandem doctor  # configuration, server, namespace, workers, clusters', 'tandem --profile prod doctor --json'))
    .action(async (o: { json?: boolean }) => {
      const { loadWorkerConfig } = await import('../config/worker.js');
      const { ConfigError } = await import('../config/errors.js');
      const checks: Check[] = [];
      let config: WorkerConfig | undefined;
      try {
        config = loadWorkerConfig();
        checks.push({ name: 'configuration', ok: true, detail: 'every TANDEM_* / TEMPORAL_* variable and the files they name are valid' });
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        for (const i of e.issues) checks.push({ name: 'configuration', ok: false, detail: `${i.source}${i.line ? `:${i.line}` : ''}${i.path ? ` ${i.path}` : ''}: ${i.message}` });
      }
      // The connection settings themselves (TEMPORAL_*, the profile) must be valid before a connection is tried.
      const { loadClientConfig } = await import('../config/worker.js');
      let connectable = true;
      try {
        loadClientConfig(undefined, { profile: c.target?.().profile });
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        connectable = false;
        // The profile's own faults (a missing CA or certificate file, a profile not in the file), named:
        // the worker configuration above is read without --profile, so they are not among its lines.
        const ok = checks.findIndex((ch) => ch.name === 'configuration' && ch.ok);
        if (ok >= 0) checks.splice(ok, 1);
        for (const i of e.issues) {
          const detail = `${i.source}${i.line ? `:${i.line}` : ''}${i.path ? ` ${i.path}` : ''}: ${i.message}`;
          if (!checks.some((ch) => ch.detail === detail)) checks.push({ name: 'configuration', ok: false, detail });
        }
        checks.push({ name: 'temporal', ok: false, detail: 'not checked: the connection settings above are invalid', fix: 'fix the TEMPORAL_* variables or the temporal.toml profile named above' });
      }
      const taskQueue = (connectable ? c.target?.().taskQueue : undefined) ?? config?.taskQueue ?? 'tandem';
      if (connectable) checks.push(...(await temporalChecks(c, taskQueue)));
      if (config) {
        checks.push(...(await siteChecks(config)));
        checks.push(...(await kubernetesChecks(config).catch((e: unknown) => [{ name: 'kubernetes', ok: false, detail: message(e) }])));
      }
      if (o.json) console.log(JSON.stringify(checks));
      else for (const ch of checks) console.log(formatCheck(ch));
      if (checks.some((ch) => !ch.ok)) process.exitCode = 1;
    });
}
