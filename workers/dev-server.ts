// Starts the real Temporal dev server (`temporal server start-dev`, SQLite-backed) on free ports and
// waits until its frontend answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, openSync, closeSync, readFileSync, existsSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Connection } from '@temporalio/client';
import { ensureTemporal } from './temporal-binary.js';
import { TANDEM_SEARCH_ATTRIBUTES } from '../contract/search-attributes.js';
import { DEFAULTS } from '../config/defaults.js';

export interface DevServerOptions {
  /** SQLite file; a temporary one under the state dir when omitted. */
  dbFile: string;
  /** Serve the Web UI too (for people); tests run headless. */
  ui?: boolean;
  port?: number;
  uiPort?: number;
  /** The Web UI's remote codec (`tandem codec-server`): the browser decodes payloads through it. */
  uiCodecEndpoint?: string;
  namespace?: string;
  log?: (line: string) => void;
  startTimeoutMs?: number;
  /**
   * Start the server in its own process group (`tandem dev`): signals to the terminal's group do not
   * reach it, and the caller stops it; it is killed when this process exits in any case.
   */
  ownProcessGroup?: boolean;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  pid: number;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something already listens on host:port (a listen attempt fails with EADDRINUSE). */
export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' || e.code === 'EACCES' ? resolve(true) : reject(e)));
    srv.listen(port, host, () => srv.close(() => resolve(false)));
  });
}

/** A port another program holds: `tandem dev` starts its own server and never attaches to that one. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

/**
 * Whether process `pid` holds the socket listening on `port` (Linux: the LISTEN entry of /proc/net/tcp*
 * and the socket inodes among the process's file descriptors); undefined where /proc cannot tell. A
 * frontend that answers is not proof enough: a server that failed to bind leaves another one answering.
 */
export function ownsListener(pid: number, port: number): boolean | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':')[1]!, 16) === port) inodes.add(f[9]!);
    }
  }
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  if (!inodes.size) return false;
  return fds.some((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
    } catch {
      return false;
    }
  });
}

/** Resolves once the frontend accepts a gRPC call, or rejects with the server's own last words. */
export async function waitForServer(address: string, timeoutMs: number, alive: () => boolean = () => true, logFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!alive()) break;
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.workflowService.getSystemInfo({});
        await conn.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await conn.close();
      }
    } catch (e) {
      lastError = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const tail = logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n') : '';
  throw new Error(`Temporal server at ${address} did not become ready within ${timeoutMs} ms (${alive() ? lastError : 'the process exited'})${tail ? `\n${tail}` : ''}`);
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const temporal = ensureTemporal(opts.log);
  const port = opts.port ?? (await freePort());
  for (const [flag, p] of [['--port', port], ['--ui-port', opts.ui ? opts.uiPort : undefined]] as const) {
    if (p !== undefined && (await portInUse(p))) throw new PortInUseError(`port ${p} (${flag}) is already in use on 127.0.0.1: another Temporal server or program listens there, and a dev server never attaches to a server it did not start. Stop it, or pick free ports with --port and --ui-port`);
  }
  mkdirSync(dirname(opts.dbFile), { recursive: true });
  const args = ['server', 'start-dev', '--port', String(port), '--db-filename', opts.dbFile, '--ip', '127.0.0.1', '--log-level', 'warn'];
  let uiPort: number | undefined;
  if (opts.ui) {
    uiPort = opts.uiPort ?? (await freePort());
    args.push('--ui-port', String(uiPort));
    if (opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  } else {
    args.push('--headless');
  }
  // Search attributes that operators filter runs by (registered once; start-dev keeps them in SQLite).
  for (const sa of TANDEM_SEARCH_ATTRIBUTES) args.push('--search-attribute', `${sa.name}=Keyword`);
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  const logFile = join(dirname(opts.dbFile), `temporal-${port}.log`);
  const out = openSync(logFile, 'a');
  const child: ChildProcess = spawn(temporal, args, { stdio: ['ignore', out, out], detached: opts.ownProcessGroup });
  closeSync(out);
  let exited = false;
  const killOnExit = () => void (exited || child.kill('SIGKILL'));
  if (opts.ownProcessGroup) process.once('exit', killOnExit);
  child.on('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
  });
  const address = `127.0.0.1:${port}`;
  try {
    await waitForServer(address, opts.startTimeoutMs ?? DEFAULTS.devServerStartTimeoutMs, () => !exited, logFile);
    // The server that answered must be the one started here (one that lost a race for the port exits,
    // and the frontend answering would be someone else's).
    if (exited || ownsListener(child.pid!, port) === false) throw new PortInUseError(`port ${port} was taken by another program while the dev server started (the server answering at ${address} is not the one started here); pick another --port`);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return {
    address,
    uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : undefined,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
