// Tandem's Slurm backends, and the one place that builds them from a worker's environment:
//   TANDEM_SLURM_API=firecrest|slurmrestd, TANDEM_SLURM_SITE (site name), TANDEM_SLURM_WORKDIR (job files)
//   FirecREST:  TANDEM_FIRECREST_URL, TANDEM_FIRECREST_SYSTEM, TANDEM_FIRECREST_TOKEN_URL,
//               TANDEM_FIRECREST_CLIENT_ID, TANDEM_FIRECREST_CLIENT_SECRET
//   slurmrestd: TANDEM_SLURMRESTD_SOCKET or TANDEM_SLURMRESTD_URL (+ TANDEM_SLURMRESTD_USER/_TOKEN for
//               rest_auth/jwt), TANDEM_SLURMRESTD_API_VERSION (default 0.0.38)
//   TANDEM_SLURM_STATUS_INTERVAL_MS: fixed status refresh; unset, it adapts to ≤ 100 requests per job-hour
export { FirecrestClient } from './firecrest-client.js';
export { FirecrestJobBackend } from './firecrest-backend.js';
export { SlurmrestdClient } from './slurmrestd-client.js';
export { SlurmrestdJobBackend } from './slurmrestd-backend.js';
export { SlurmApiError } from './errors.js';
import type { JobBackend } from '../types.js';
import { FirecrestJobBackend } from './firecrest-backend.js';
import { SlurmrestdJobBackend } from './slurmrestd-backend.js';

export function slurmBackendFromEnv(env: NodeJS.ProcessEnv = process.env): JobBackend | undefined {
  const api = env.TANDEM_SLURM_API;
  if (!api) return undefined;
  const need = (k: string) => {
    const v = env[k];
    if (!v) throw new Error(`${k} must be set when TANDEM_SLURM_API=${api}`);
    return v;
  };
  const site = env.TANDEM_SLURM_SITE ?? 'slurm';
  const workDir = need('TANDEM_SLURM_WORKDIR');
  const statusIntervalMs = env.TANDEM_SLURM_STATUS_INTERVAL_MS ? Number(env.TANDEM_SLURM_STATUS_INTERVAL_MS) : undefined;
  if (api === 'firecrest') {
    return new FirecrestJobBackend({
      site,
      workDir,
      statusIntervalMs,
      system: need('TANDEM_FIRECREST_SYSTEM'),
      firecrest: {
        baseUrl: need('TANDEM_FIRECREST_URL'),
        credentials: { tokenUrl: need('TANDEM_FIRECREST_TOKEN_URL'), clientId: need('TANDEM_FIRECREST_CLIENT_ID'), clientSecret: need('TANDEM_FIRECREST_CLIENT_SECRET') },
      },
    });
  }
  if (api === 'slurmrestd') {
    return new SlurmrestdJobBackend({
      site,
      workDir,
      statusIntervalMs,
      rest: {
        socketPath: env.TANDEM_SLURMRESTD_SOCKET,
        baseUrl: env.TANDEM_SLURMRESTD_URL,
        user: env.TANDEM_SLURMRESTD_USER,
        token: env.TANDEM_SLURMRESTD_TOKEN,
        apiVersion: env.TANDEM_SLURMRESTD_API_VERSION,
      },
    });
  }
  throw new Error(`TANDEM_SLURM_API must be "firecrest" or "slurmrestd", not ${JSON.stringify(api)}`);
}
