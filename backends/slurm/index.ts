// Tandem's Slurm backends, and the one place that builds the worker's Slurm backend from its settings
// (config/worker.ts reads them from TANDEM_SLURM_API and friends; see docs/slurm.md).
export { FirecrestClient } from './firecrest-client.js';
export { FirecrestJobBackend } from './firecrest-backend.js';
export { SlurmrestdClient } from './slurmrestd-client.js';
export { SlurmrestdJobBackend } from './slurmrestd-backend.js';
export { SlurmApiError } from './errors.js';
import type { JobBackend } from '../types.js';
import { FirecrestJobBackend } from './firecrest-backend.js';
import { SlurmrestdJobBackend } from './slurmrestd-backend.js';

/** The Slurm backend of a worker (TANDEM_SLURM_API=firecrest|slurmrestd and its variables). */
export type SlurmApiSettings =
  | (SlurmCommonSettings & { api: 'firecrest'; url: string; system: string; tokenUrl: string; clientId: string; clientSecret: string })
  | (SlurmCommonSettings & { api: 'slurmrestd'; socket?: string; url?: string; user?: string; token?: string; apiVersion?: string });

interface SlurmCommonSettings {
  /** Site name, recorded in job refs. */
  site: string;
  /** Where job files live, as the site sees the path. */
  workDir: string;
  /** Fixed status refresh; unset, it adapts to ≤ 100 requests per job-hour. */
  statusIntervalMs?: number;
}

export function slurmBackend(s: SlurmApiSettings): JobBackend {
  const { site, workDir, statusIntervalMs } = s;
  if (s.api === 'firecrest') {
    return new FirecrestJobBackend({
      site,
      workDir,
      statusIntervalMs,
      system: s.system,
      firecrest: { baseUrl: s.url, credentials: { tokenUrl: s.tokenUrl, clientId: s.clientId, clientSecret: s.clientSecret } },
    });
  }
  return new SlurmrestdJobBackend({
    site,
    workDir,
    statusIntervalMs,
    rest: { socketPath: s.socket, baseUrl: s.url, user: s.user, token: s.token, apiVersion: s.apiVersion },
  });
}
