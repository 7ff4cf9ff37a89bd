// Recovery sites from a sites file: per site a job backend (FirecREST or slurmrestd), its health probe,
// checkpoint verification where the data lives, and an inventory source so failover can ask placement.
import { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import { readFile } from 'node:fs/promises';
import { parseSitesFile, type SiteConfig, type SitesFile } from '../contract/sites.js';
import { firecrestSource, slurmrestdSource } from './placement-sources.js';
import { firecrestHasher, firecrestHealth, slurmrestdHealth, type RecoverySite } from './recovery.js';

function secret(site: SiteConfig, field: string, variable: string, env: NodeJS.ProcessEnv): string {
  const v = env[variable];
  if (!v) throw new Error(`site ${site.name}: ${field} names the environment variable ${variable}, which is not set`);
  return v;
}

export function recoverySite(s: SiteConfig, env: NodeJS.ProcessEnv = process.env): RecoverySite {
  const root = s.root ?? `${s.workDir.replace(/\/+$/, '')}/tandem`;
  // Fast, bounded retries: the failover path has its own grace window and health probes.
  const backoff = { attempts: s.retries + 1, initialMs: 100, maxMs: 1000 };
  if (s.api === 'firecrest') {
    const system = s.system ?? s.name;
    const b = new FirecrestJobBackend({
      site: s.name,
      system,
      workDir: s.workDir,
      statusIntervalMs: s.statusIntervalMs,
      firecrest: { baseUrl: s.url, credentials: { tokenUrl: s.tokenUrl, clientId: s.clientId, clientSecret: secret(s, 'clientSecretEnv', s.clientSecretEnv, env) }, timeoutMs: s.timeoutMs, backoff },
    });
    return { name: s.name, backend: b, root, health: firecrestHealth(b.client, system), hasher: firecrestHasher(b.client, system), inventory: firecrestSource(b, system) };
  }
  const b = new SlurmrestdJobBackend({
    site: s.name,
    workDir: s.workDir,
    statusIntervalMs: s.statusIntervalMs,
    rest: { socketPath: s.socket, baseUrl: s.url, user: s.user, token: s.tokenEnv ? secret(s, 'tokenEnv', s.tokenEnv, env) : undefined, apiVersion: s.apiVersion, timeoutMs: s.timeoutMs, backoff },
  });
  return { name: s.name, backend: b, root, health: slurmrestdHealth(b.client), inventory: slurmrestdSource(b) };
}

export function recoverySites(file: SitesFile, env: NodeJS.ProcessEnv = process.env): RecoverySite[] {
  return file.sites.map((s) => recoverySite(s, env));
}

/** The sites named by TANDEM_SITES_FILE, or none. */
export async function recoverySitesFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<RecoverySite[]> {
  const path = env.TANDEM_SITES_FILE;
  return path ? recoverySites(parseSitesFile(await readFile(path, 'utf8'), path), env) : [];
}
