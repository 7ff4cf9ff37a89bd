// Which backend serves a stage. `auto` resolves to the best configured runtime; until placement
// across sites is configured (see the placement issue), a worker with only the embedded runtime
// resolves it to `local`.
import type { Runtime } from '../contract/pipeline.js';
import { failure } from '../contract/failures.js';
import type { JobBackend } from '../backends/types.js';

export type BackendMap = Partial<Record<Exclude<Runtime, 'auto'>, JobBackend>>;

/** The site a backend runs jobs at (Slurm and Kubernetes backends name theirs; local is "local"). */
export function siteOf(b: JobBackend): string {
  return (b as { site?: string }).site ?? b.runtime;
}

export function resolveBackend(backends: BackendMap, runtime: Runtime, stage: string, site?: string): JobBackend {
  if (runtime === 'auto' && site) {
    // Placement chose a site: the backend that runs jobs there (else the usual preference below).
    const chosen = Object.values(backends).find((b) => b && siteOf(b) === site);
    if (chosen) return chosen;
  }
  if (runtime === 'auto') {
    const chosen = backends.slurm ?? backends.kubernetes ?? backends.local;
    if (chosen) return chosen;
  } else {
    const b = backends[runtime];
    if (b) return b;
  }
  const configured = Object.keys(backends).join(', ') || 'none';
  throw failure('RuntimeUnavailable', `stage ${stage} asks for runtime "${runtime}", but this worker has no such backend configured (configured: ${configured}). Set stages.${stage}.runtime to one of them, or start a worker with that backend.`);
}
