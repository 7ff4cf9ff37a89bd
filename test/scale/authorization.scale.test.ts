// Authorization on a real cluster (docs/authorization.md): the full Temporal server on PostgreSQL with
// mutual TLS (scripts/temporal-server/cluster.sh) and, on top, Temporal's default JWT claim mapper and
// authorizer verifying tokens against a local OIDC issuer's JWKS (test/scale/oidc-issuer.ts, RS256).
// A tenant is a namespace: tenant A's client holds "tenant-a:write", tenant B's "tenant-b:write", the
// operator "temporal-system:admin". Every client gets its token the way the SDK and workers do, by the
// OIDC client-credentials grant (sdk/oidc-token.ts, from TandemClient.connect's `oidc` or
// TEMPORAL_OIDC_*). The matrix below runs start, signal, cancel, list, describe and history for every
// caller in both namespaces and checks, through the operator, that a refused call changed nothing.
// Then tokens living 5 s: the SDK client and a worker keep working across several expiries because
// they refresh, while a connection holding one unrefreshed token is refused once it expired.
// npm run test:scale (jest.config.js); binaries: npm run temporal-server:install.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import Long from 'long';
import { OidcTokenSource, type ClientCredentials } from '../../backends/oidc.js';
import { loadClientConfig } from '../../config/worker.js';
import { errorChain } from '../../contract/error-chain.js';
import { TandemClient } from '../../sdk/client.js';
import { listExecutions } from '../../sdk/list.js';
import { createTandemWorker } from '../../workers/worker.js';
import { bundleWorkflows } from '../../workers/worker.js';
import { spec, waitFor } from '../helpers.js';
import { startOidcIssuer, type IssuerClient, type OidcIssuer } from './oidc-issuer.js';
import { serverBuilt, startFullServer, tlsOf, type FullServer } from './temporal-server.js';

const TENANTS = ['tenant-a', 'tenant-b'] as const;
type Namespace = (typeof TENANTS)[number];
const ACTORS = ['tenant-a', 'tenant-b', 'operator', 'certificate only'] as const;
type Actor = (typeof ACTORS)[number];
const OPS = ['start', 'signal', 'describe', 'history', 'list', 'cancel'] as const;
type Op = (typeof OPS)[number];
/** Nobody polls it: the matrix's runs wait there, so only authorization decides what a call does. */
const IDLE_QUEUE = 'authz-idle';

const secret = () => randomBytes(18).toString('base64url');
const CLIENTS: Record<string, IssuerClient> = {
  'tenant-a': { secret: secret(), permissions: ['tenant-a:write'] },
  'tenant-b': { secret: secret(), permissions: ['tenant-b:write'] },
  operator: { secret: secret(), permissions: ['temporal-system:admin'] },
  // The refresh test's clients: the same rights, tokens that live 5 s.
  'tenant-a-short': { secret: secret(), permissions: ['tenant-a:write'], lifetimeS: 5 },
  'tenant-a-worker': { secret: secret(), permissions: ['tenant-a:write'], lifetimeS: 5 },
};

let issuer: OidcIssuer;
/** The issuer's endpoints as its discovery document names them (what an operator configures from). */
let discovered: { token_endpoint: string; jwks_uri: string };
let server: FullServer;
let dir: string;
const creds = (id: string): ClientCredentials => ({ tokenUrl: discovered.token_endpoint, clientId: id, clientSecret: CLIENTS[id]!.secret });
const clients = new Map<string, TandemClient>();

/** The actor's client bound to a namespace (the operator's, the tenants', one holding only the certificate). */
async function clientOf(actor: Actor, ns: string, taskQueue = IDLE_QUEUE): Promise<TandemClient> {
  const key = `${actor}/${ns}/${taskQueue}`;
  let c = clients.get(key);
  if (!c) {
    c = await TandemClient.connect({ address: server.address, tls: server.connection.tls, namespace: ns, taskQueue, ...(actor === 'certificate only' ? {} : { oidc: creds(actor) }) });
    clients.set(key, c);
  }
  return c;
}

/** PERMISSION_DENIED (gRPC 7) anywhere in the error's cause chain. */
function denied(e: unknown): boolean {
  return errorChain(e).some((l) => (l as { code?: unknown }).code === 7 || /PERMISSION_DENIED/.test(l.message ?? ''));
}

beforeAll(async () => {
  if (!serverBuilt()) throw new Error('the Temporal server is not built: run npm run temporal-server:install');
  try {
    Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  } catch {
    /* test/lanes/quiet-runtime.ts installed an ERROR-level one */
  }
  dir = mkdtempSync(join(tmpdir(), 'tandem-authz-'));
  issuer = await startOidcIssuer(CLIENTS);
  discovered = (await (await fetch(`${issuer.issuer}/.well-known/openid-configuration`)).json()) as typeof discovered;
  expect(discovered).toMatchObject({ issuer: issuer.issuer, token_endpoint: issuer.tokenUrl, jwks_uri: issuer.jwksUrl });
  const operatorTokens = new OidcTokenSource(creds('operator'));
  server = await startFullServer({ authorization: { jwksUrl: discovered.jwks_uri, apiKey: () => operatorTokens.token() } });
  console.log(`[authz] Temporal ${server.address} on PostgreSQL, mTLS + JWT authorization (JWKS ${issuer.jwksUrl}): ready in ${(server.startupMs / 1000).toFixed(1)} s`);
  // The operator creates the tenants' namespaces and registers Tandem's search attributes in each.
  const op = await clientOf('operator', 'default');
  for (const ns of TENANTS) {
    await op.client.workflowService.registerNamespace({ namespace: ns, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(24 * 3600) } });
  }
  for (const ns of TENANTS) {
    const c = await clientOf('operator', ns);
    // A new namespace reaches the frontend's cache within its refresh interval; until then setup fails.
    await waitFor(`namespace ${ns} to serve`, () => c.setup().then(() => true, () => undefined), 60_000, 500);
  }
}, 300_000);

afterAll(async () => {
  for (const c of clients.values()) await c.close().catch(() => undefined);
  await server?.stop();
  await issuer?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('per-tenant authorization', () => {
  test('each tenant reaches only its own namespace; the operator reaches both; the certificate alone reaches neither', async () => {
    const op = (ns: Namespace) => clientOf('operator', ns);
    const target = (actor: Actor) => `target-of-${actor.replace(/ /g, '-')}`;
    // The operator starts, in each namespace, one run per caller for the caller to act on.
    for (const ns of TENANTS) for (const actor of ACTORS) await (await op(ns)).launch(spec({ name: 'authz', tenant: ns }), { id: target(actor) });
    // Visibility is written asynchronously: wait until the operator lists them, so `list` is decided by authorization alone.
    for (const ns of TENANTS) {
      await waitFor(`the targets in ${ns} to be listed`, async () => {
        const ids = new Set<string>();
        for await (const e of listExecutions((await op(ns)).client, "WorkflowId STARTS_WITH 'target-of-'")) ids.add(e.workflowId);
        return ids.size === ACTORS.length ? true : undefined;
      }, 30_000, 200);
    }

    const history = async (ns: Namespace, id: string) => (await (await op(ns)).client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const calls: Record<Op, (c: TandemClient, actor: Actor, ns: Namespace) => Promise<unknown>> = {
      start: (c, actor) => c.launch(spec({ name: 'authz', tenant: c.namespace }), { id: `started-by-${actor.replace(/ /g, '-')}` }),
      signal: (c, actor) => c.client.workflow.getHandle(target(actor)).signal('tandem.authz-probe'),
      describe: (c, actor) => c.client.workflow.getHandle(target(actor)).describe(),
      history: (c, actor) => c.client.workflow.getHandle(target(actor)).fetchHistory(),
      list: async (c) => {
        const ids: string[] = [];
        for await (const e of listExecutions(c.client, `WorkflowId = '${target('operator')}'`)) ids.push(e.workflowId);
        return ids;
      },
      cancel: (c, actor) => c.client.workflow.getHandle(target(actor)).cancel(),
    };
    // What the call did, seen by the operator: a refused call must have changed nothing.
    const effect: Partial<Record<Op, (actor: Actor, ns: Namespace, answer: unknown) => Promise<boolean>>> = {
      start: (actor, ns) => (async () => (await op(ns)).client.workflow.getHandle(`started-by-${actor.replace(/ /g, '-')}`).describe())().then(() => true, (e) => (e instanceof WorkflowNotFoundError ? false : Promise.reject(e))),
      signal: async (actor, ns) => (await history(ns, target(actor))).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'tandem.authz-probe'),
      cancel: async (actor, ns) => (await history(ns, target(actor))).some((e) => !!e.workflowExecutionCancelRequestedEventAttributes),
      list: async (_actor, _ns, answer) => Array.isArray(answer) && answer.includes(target('operator')),
      describe: async (_actor, _ns, answer) => (answer as { status?: { name?: string } } | undefined)?.status?.name === 'RUNNING',
      history: async (_actor, _ns, answer) => ((answer as { events?: unknown[] } | undefined)?.events?.length ?? 0) > 0,
    };

    const matrix: Record<string, Record<string, string>> = {};
    const problems: string[] = [];
    for (const actor of ACTORS) {
      for (const ns of TENANTS) {
        const row = (matrix[`${actor} → ${ns}`] = {} as Record<string, string>);
        const allowed = actor === 'operator' || actor === ns;
        const c = await clientOf(actor, ns);
        for (const name of OPS) {
          let answer: unknown;
          let error: unknown;
          try {
            answer = await calls[name](c, actor, ns);
          } catch (e) {
            error = e;
          }
          const happened = await effect[name]!(actor, ns, answer);
          row[name] = error === undefined ? (happened ? 'allowed' : 'ANSWERED, NO EFFECT') : denied(error) ? (happened ? 'DENIED, BUT HAPPENED' : 'denied') : `ERROR ${(error as Error).message}`;
          if (row[name] !== (allowed ? 'allowed' : 'denied')) problems.push(`${actor} ${name} in ${ns}: ${row[name]}`);
        }
      }
    }
    console.log(`[authz] authorization matrix (caller → namespace; "denied" = PERMISSION_DENIED and, seen by the operator, nothing changed)\n${table(matrix)}`);
    expect(problems).toEqual([]);
  });
});

describe("the server's own worker service", () => {
  test('works under authorization: tenant A\'s schedule fires (the scheduler runs in the worker service, through the internal-frontend)', async () => {
    const a = await clientOf('tenant-a', 'tenant-a');
    const id = `authz-schedule-${randomBytes(3).toString('hex')}`;
    const handle = await a.client.schedule.create({
      scheduleId: id,
      spec: { intervals: [{ every: '1h' }] },
      action: { type: 'startWorkflow', workflowType: 'hybridPipeline', taskQueue: IDLE_QUEUE, args: [{ spec: spec({ name: 'scheduled', tenant: 'tenant-a' }) }] },
    });
    try {
      await handle.trigger();
      const started = await waitFor('the schedule to start its run', async () => ((await handle.describe()).info.recentActions.length ? true : undefined), 60_000, 500);
      expect(started).toBe(true);
      // Tenant B can neither see nor trigger it.
      const b = await clientOf('tenant-b', 'tenant-a');
      expect(denied(await b.client.schedule.getHandle(id).describe().then(() => undefined, (e: unknown) => e))).toBe(true);
      expect(denied(await b.client.schedule.getHandle(id).trigger().then(() => undefined, (e: unknown) => e))).toBe(true);
    } finally {
      await handle.delete();
    }
  });

  test('the internal-frontend admits only internode certificates: a tenant\'s client certificate is refused there', async () => {
    const internal = server.internal!;
    const probe = async (files: FullServer['files']) => {
      // The internode CA is what the internal-frontend's certificate is signed by; the client certificate is what is tested.
      const c = await Connection.connect({ address: internal.address, tls: { ...tlsOf(files), serverRootCACertificate: tlsOf(internal.files).serverRootCACertificate }, connectTimeout: 5_000 });
      try {
        return await c.workflowService.describeNamespace({ namespace: 'tenant-a' });
      } finally {
        await c.close();
      }
    };
    await expect(probe(server.files)).rejects.toThrow();
    // The control: the cluster's own certificate is served there, with system rights and no token.
    expect((await probe(internal.files)).namespaceInfo?.name).toBe('tenant-a');
  });
});

describe('token refresh', () => {
  test('the SDK client and a worker keep working across several 5 s token lifetimes; an unrefreshed token is refused once expired', async () => {
    const queue = `authz-work-${randomBytes(3).toString('hex')}`;
    // The worker is configured the way `npm run worker` is: TEMPORAL_* and TEMPORAL_OIDC_* (config/worker.ts).
    const secretFile = join(dir, 'worker-secret');
    writeFileSync(secretFile, `${CLIENTS['tenant-a-worker']!.secret}\n`, { mode: 0o600 });
    const config = loadClientConfig({ ...server.env, TEMPORAL_NAMESPACE: 'tenant-a', TEMPORAL_OIDC_TOKEN_URL: issuer.tokenUrl, TEMPORAL_OIDC_CLIENT_ID: 'tenant-a-worker', TEMPORAL_OIDC_CLIENT_SECRET_FILE: secretFile });
    expect(config.oidc).toEqual({ tokenUrl: issuer.tokenUrl, clientId: 'tenant-a-worker', clientSecret: CLIENTS['tenant-a-worker']!.secret });
    const { address, ...connection } = config.connection;
    const { worker, connection: workerConnection } = await createTandemWorker({ address, connection, oidc: config.oidc, namespace: config.namespace, taskQueue: queue, home: join(dir, 'home'), workflowBundle: await bundleWorkflows() });
    const running = worker.run();
    const tandem = await TandemClient.connect({ address: server.address, tls: server.connection.tls, namespace: 'tenant-a', taskQueue: queue, oidc: creds('tenant-a-short') });
    // The control: one token, never refreshed.
    const once = await new OidcTokenSource(creds('tenant-a-short')).token();
    const fixed = await Connection.connect({ ...server.connection, apiKey: once });
    const fixedClient = new Client({ connection: fixed, namespace: 'tenant-a' });
    try {
      await fixedClient.workflowService.countWorkflowExecutions({ namespace: 'tenant-a', query: '' });
      const issuedBefore = { sdk: issuer.issued['tenant-a-short'] ?? 0, worker: issuer.issued['tenant-a-worker'] ?? 0 };
      // Three lifetimes: every token issued before this point has expired.
      await new Promise((r) => setTimeout(r, 15_000));
      const expired = await fixedClient.workflowService.countWorkflowExecutions({ namespace: 'tenant-a', query: '' }).then(() => undefined, (e: unknown) => e);
      expect(denied(expired)).toBe(true);

      // The SDK client starts a run; the worker (its token refreshed too) runs its tasks.
      const h = await tandem.launch(spec({ name: 'refresh', tenant: 'tenant-a' }), { id: `refresh-${randomBytes(3).toString('hex')}` });
      const events = () => h.workflow.fetchHistory().then((x) => x.events ?? []);
      await waitFor('the worker to complete a workflow task and an activity', async () => {
        const ev = await events();
        return ev.some((e) => e.workflowTaskCompletedEventAttributes) && ev.some((e) => e.activityTaskCompletedEventAttributes) ? true : undefined;
      }, 60_000, 500);
      await h.cancel();
      await waitFor('the run to close cancelled', async () => ((await h.workflow.describe()).status.name === 'CANCELLED' ? true : undefined), 60_000, 500);
      const issued = { sdk: (issuer.issued['tenant-a-short'] ?? 0) - issuedBefore.sdk, worker: (issuer.issued['tenant-a-worker'] ?? 0) - issuedBefore.worker };
      console.log(`[authz] 5 s tokens: refreshed ${issued.sdk}× by the SDK client and ${issued.worker}× by the worker during the test; the unrefreshed token was refused after expiry`);
      // Refreshed at half the lifetime: at least 15 s / 2.5 s = 6 new tokens each while waiting alone.
      expect(issued.sdk).toBeGreaterThanOrEqual(5);
      expect(issued.worker).toBeGreaterThanOrEqual(5);
    } finally {
      await fixed.close();
      await tandem.close();
      worker.shutdown();
      await running;
      await workerConnection.close();
    }
  }, 180_000);

  test('a wrong client secret is refused by the issuer, and the error names neither secret nor token', async () => {
    const wrong = 'not-the-secret-' + randomBytes(6).toString('hex');
    const err = await TandemClient.connect({ address: server.address, tls: server.connection.tls, namespace: 'tenant-a', oidc: { ...creds('tenant-a'), clientSecret: wrong } }).then(() => undefined, (e: Error) => e);
    expect(err?.message).toMatch(/token endpoint refused the client-credentials grant \(401 invalid_client\)/);
    expect(err?.message).not.toContain(wrong);
    expect(err?.message).not.toContain(CLIENTS['tenant-a']!.secret);
  });
});

function table(matrix: Record<string, Record<string, string>>): string {
  const rows = Object.entries(matrix);
  const w0 = Math.max(...rows.map(([k]) => k.length), 'caller → namespace'.length);
  const w = OPS.map((o) => Math.max(o.length, ...rows.map(([, r]) => r[o]!.length)));
  const line = (first: string, cells: string[]) => `| ${first.padEnd(w0)} | ${cells.map((c, i) => c.padEnd(w[i]!)).join(' | ')} |`;
  return [line('caller → namespace', [...OPS]), `|${'-'.repeat(w0 + 2)}|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...rows.map(([k, r]) => line(k, OPS.map((o) => r[o]!)))].join('\n');
}
