// A private PostgreSQL for real Argo's synchronization database (`mutexes: [{ name, database: true }]`,
// v3.7): without one the controller fails such a workflow at once ("database session is not available").
// initdb in a temp dir, trust authentication, TCP on 127.0.0.1 only, its socket in the temp dir; run as
// the postgres user when this process is root (PostgreSQL refuses root), under pdeathsig so it never
// outlives the caller; stop() ends it by PID (SIGINT: PostgreSQL's fast shutdown). Debian's packages
// (scripts/temporal-server/install-postgres.sh) provide the binaries; none installed → undefined.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { freePort } from '../../workers/dev-server.js';

export interface SyncDatabase {
  port: number;
  /** The controller ConfigMap's `synchronization` value and the Secret it names. */
  controllerConfig: Record<string, string>;
  objects: KubernetesObject[];
  stop(): Promise<void>;
}

function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(a) - Number(b));
  for (const v of versions.reverse()) if (existsSync(join(root, v, 'bin', 'postgres'))) return join(root, v, 'bin');
  return undefined;
}

export async function startSyncDatabase(): Promise<SyncDatabase | undefined> {
  const bin = pgBin();
  if (!bin) return undefined;
  // Its own temp dir: the postgres user must be able to reach it.
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sync-db-'));
  const root = process.getuid?.() === 0;
  const pg = join(dir, 'pg');
  const sock = join(dir, 'pgsock');
  mkdirSync(pg, { recursive: true, mode: 0o700 });
  mkdirSync(sock, { recursive: true });
  const ids = root ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }) : undefined;
  const uid = ids ? Number(ids.stdout.trim()) : undefined;
  if (root) {
    if (!uid) return undefined;
    for (const d of [dir, pg, sock]) chownSync(d, uid, Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()));
  }
  const as = root ? ['setpriv', '--reuid', 'postgres', '--regid', 'postgres', '--init-groups'] : ['setpriv'];
  const init = spawnSync(as[0]!, [...as.slice(1), join(bin, 'initdb'), '-D', pg, '-U', 'argo', '--auth=trust', '-E', 'UTF8'], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const child = spawn(as[0]!, [...as.slice(1), '--pdeathsig', 'KILL', join(bin, 'postgres'), '-D', pg, '-p', String(port), '-k', sock, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off'], { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    if (spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]).status === 0) break;
    if (child.exitCode !== null || i > 300) throw new Error(`PostgreSQL did not start on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const synchronization = `postgresql:
  host: 127.0.0.1
  port: ${port}
  database: postgres
  sslMode: disable
  userNameSecret: { name: oracle-sync-db, key: username }
  passwordSecret: { name: oracle-sync-db, key: password }
controllerName: oracle
pollSeconds: 1
`;
  return {
    port,
    controllerConfig: { synchronization },
    objects: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oracle-sync-db' }, stringData: { username: 'argo', password: 'trust' } } as KubernetesObject],
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGINT');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
