// Recovery sites from a sites file: per site a job backend (FirecREST or slurmrestd), its health probe,
// checkpoint verification where the data lives, and an inventory source so failover can ask placement.
import { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import type { SiteConfig, SitesFile } from '../contract/sites.js';
import { firecrestSource, slurmrestdSource } from './placement-sources.js';
import { firecrestHasher, firecrestHealth, slurmrestdHealth, type RecoverySite } from './recovery.js';

/** `secrets`: the variables the sites file names, as config/worker.ts looked them up. */
type Secrets = Record<string, string | undefined>;

function secret(site: SiteConfig, field: string, variable: string, env: Secrets): string {
  const v = env[variable];
  if (!v) throw new Error(`site ${site.name}: ${field} names the environment variable ${variable}, which is not set`);
  return v;
}

export function recoverySite(s: SiteConfig, env: Secrets): RecoverySite {
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

/** The sites of a sites file (TANDEM_SITES_FILE, loaded by config/worker.ts), or none. */
export function recoverySites(file: SitesFile | undefined, env: Secrets): RecoverySite[] {
  return (file?.sites ?? []).map((s) => recoverySite(s, env));
}
