// A full Temporal server on PostgreSQL with mutual TLS required, for the test:scale suites and
// bench:scale: started by scripts/temporal-server/cluster.sh in a private directory on free loopback
// ports, ready once a client holding the test certificate can use the default namespace (created here,
// as on any fresh cluster) with Tandem's search attributes registered (`tandem setup`). Stopped by PID.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import Long from 'long';
import type { TemporalConnection } from '../../config/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/temporal-server/cluster.sh', import.meta.url));
export const SERVER_TOOLS = fileURLToPath(new URL('../../.tools/temporal-server', import.meta.url));

export interface FullServer {
  address: string;
  namespace: string;
  /** The files a client needs: the CA that signed the server, and a client certificate pair. */
  files: { ca: string; cert: string; key: string; serverName: string };
  /** What createTandemWorker and TandemClient.connect take (config/worker.ts TemporalConnection). */
  connection: TemporalConnection;
  /** The TEMPORAL_* variables that say the same, for worker processes (@temporalio/envconfig). */
  env: Record<string, string>;
  dir: string;
  /** From `cluster.sh up` to a namespace that serves requests. */
  startupMs: number;
  pid: number;
  /** PostgreSQL's postmaster (its backends are its children). */
  pgPid: number;
  /** With authorization: the internal-frontend (system rights, internode mTLS) and the internode certificate files. */
  internal?: { address: string; files: FullServer['files'] };
  log(): string;
  stop(): Promise<void>;
}

export function serverBuilt(): boolean {
  return existsSync(join(SERVER_TOOLS, 'temporal-server')) && existsSync(join(SERVER_TOOLS, 'temporal-sql-tool'));
}

export function tlsOf(files: FullServer['files']): TLSConfig {
  return {
    serverRootCACertificate: readFileSync(files.ca),
    clientCertPair: { crt: readFileSync(files.cert), key: readFileSync(files.key) },
    serverNameOverride: files.serverName,
  };
}

/**
 * Authorization (scripts/temporal-server/cluster.sh, docs/authorization.md): the frontend verifies JWTs
 * against `jwksUrl` and authorizes by their permissions; `apiKey` is an operator's token
 * ("temporal-system:admin"), which the harness uses to create the namespace and register Tandem's
 * search attributes. `connection` and `env` carry no token: each caller brings its own.
 */
export interface ServerAuthorization {
  jwksUrl: string;
  apiKey: () => Promise<string>;
}

export async function startFullServer(opts: { startTimeoutMs?: number; authorization?: ServerAuthorization } = {}): Promise<FullServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-temporal-pg-'));
  const started = Date.now();
  const down = () => run('bash', [SCRIPT, 'down', dir]).catch(() => undefined);
  let kv: Record<string, string>;
  try {
    const ports: number[] = [];
    while (ports.length < (opts.authorization ? 13 : 10)) {
      const p = await lowFreePort();
      if (!ports.includes(p)) ports.push(p);
    }
    const env = opts.authorization ? { ...process.env, TANDEM_TS_JWKS_URL: opts.authorization.jwksUrl } : process.env;
    const { stdout } = await run('bash', [SCRIPT, 'up', dir, ports.join(',')], { timeout: 180_000, env });
    kv = Object.fromEntries(stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  } catch (e) {
    await down();
    throw new Error(`could not start the Temporal server on PostgreSQL in ${dir}: ${(e as { stderr?: string }).stderr || (e as Error).message}`);
  }
  const files = { ca: kv.CA!, cert: kv.CLIENT_CERT!, key: kv.CLIENT_KEY!, serverName: kv.SERVER_NAME! };
  const address = kv.ADDRESS!;
  const namespace = 'default';
  const connection: TemporalConnection = { address, tls: tlsOf(files) };
  const log = () => (existsSync(kv.LOG!) ? readFileSync(kv.LOG!, 'utf8') : '');
  const stop = async () => {
    await down();
    if (!process.env.TANDEM_KEEP_TEST_DIR) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilReady(connection, namespace, opts.startTimeoutMs ?? 120_000, () => log(), Number(kv.PID), opts.authorization?.apiKey);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    address,
    namespace,
    files,
    connection,
    env: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca, TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: files.key, TEMPORAL_TLS_SERVER_NAME: files.serverName },
    dir,
    startupMs: Date.now() - started,
    pid: Number(kv.PID),
    pgPid: Number(kv.PG_PID),
    ...(kv.INTERNAL_FRONTEND ? { internal: { address: kv.INTERNAL_FRONTEND, files: { ca: kv.INTERNODE_CA!, cert: kv.INTERNODE_CERT!, key: kv.INTERNODE_KEY!, serverName: kv.SERVER_NAME! } } } : {}),
    log,
    stop,
  };
}

/** Connects over mTLS, registers the namespace, then Tandem's search attributes, retrying while the server boots. */
async function untilReady(conn: TemporalConnection, namespace: string, timeoutMs: number, log: () => string, pid: number, apiKey?: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let registered = false;
  for (;;) {
    if (!alive(pid)) throw new Error(`the Temporal server exited during start-up\n--- server log (tail) ---\n${log().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`the Temporal server did not become ready in ${timeoutMs} ms (last: ${last})\n--- server log (tail) ---\n${log().slice(-4000)}`);
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ ...conn, ...(apiKey ? { apiKey: await apiKey() } : {}), connectTimeout: 5_000 });
      if (!registered) {
        await connection.workflowService
          .registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(24 * 3600) } })
          .catch((e: { code?: number }) => {
            if (e.code !== 6) throw e; // ALREADY_EXISTS: an earlier attempt got through
          });
        registered = true;
      }
      // The namespace reaches the frontend's registry within its refresh interval; until then setup fails.
      const tandem = await TandemClient.connect({ client: new Client({ connection, namespace }) });
      await tandem.setup();
      await connection.workflowService.countWorkflowExecutions({ namespace, query: '' });
      return;
    } catch (e) {
      last = (e as Error).message;
    } finally {
      await connection?.close();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A free loopback port below 32768: Temporal's SQL schema keeps cluster membership ports in a smallint
 * column, so the kernel's ephemeral ports (32768 and up, what port 0 gives) make the server exit.
 */
async function lowFreePort(): Promise<number> {
  for (;;) {
    const port = randomInt(20_000, 32_768);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
