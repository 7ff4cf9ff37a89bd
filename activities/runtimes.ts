// Which backend serves a stage. `auto` resolves to the best configured runtime; until placement
// across sites is configured (see the placement issue), a worker with only the embedded runtime
// resolves it to `local`.
import { ApplicationFailure } from '@temporalio/activity';
import type { Runtime } from '../spec/pipeline.js';
import { FAILURES } from '../spec/outcome.js';
import type { JobBackend } from '../backends/types.js';

export type BackendMap = Partial<Record<Exclude<Runtime, 'auto'>, JobBackend>>;

export function resolveBackend(backends: BackendMap, runtime: Runtime, stage: string): JobBackend {
  if (runtime === 'auto') {
    const chosen = backends.slurm ?? backends.kubernetes ?? backends.local;
    if (chosen) return chosen;
  } else {
    const b = backends[runtime];
    if (b) return b;
  }
  const configured = Object.keys(backends).join(', ') || 'none';
  throw ApplicationFailure.create({
    ...FAILURES.RuntimeUnavailable,
    message: `stage ${stage} asks for runtime "${runtime}", but this worker has no such backend configured (configured: ${configured}). Set stages.${stage}.runtime to one of them, or start a worker with that backend.`,
  });
}
