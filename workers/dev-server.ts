// Starts the real Temporal dev server (`temporal server start-dev`, SQLite-backed) on free ports and
// waits until its frontend answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, openSync, closeSync, readFileSync, existsSync } from 'node:fs';
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
  const child: ChildProcess = spawn(temporal, args, { stdio: ['ignore', out, out] });
  closeSync(out);
  let exited = false;
  child.on('exit', () => (exited = true));
  const address = `127.0.0.1:${port}`;
  try {
    await waitForServer(address, opts.startTimeoutMs ?? DEFAULTS.devServerStartTimeoutMs, () => !exited, logFile);
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
