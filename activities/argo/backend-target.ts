// What the Slurm and Kubernetes execution targets share: watch a submitted job to its end, then turn
// its state and output into an Argo node result. Output files stay on the site (only stdout returns).
import type { JobBackend } from '../../backends/types.js';
import { classifyJobState, type JobRef } from '../../contract/outcome.js';
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';

export async function watchToResult(
  backend: JobBackend,
  ref: JobRef,
  input: RunPodInput,
  ctx: { heartbeat(d?: unknown): void; sleep(ms: number): Promise<void> },
  opts: { pollMs: number; target: string; output: () => Promise<string | undefined>; describe: string },
): Promise<RunPodResult> {
  for (;;) {
    const st = await backend.status(ref.jobId);
    ctx.heartbeat({ jobId: ref.jobId, state: st.state });
    const outcome = classifyJobState(st.state);
    if (outcome !== 'active') {
      const result = ((await opts.output().catch(() => undefined)) ?? '').replace(/\n$/, '');
      const parameters = Object.fromEntries(input.outputParameters.filter((p) => p.default !== undefined).map((p) => [p.name, p.default!]));
      const base = { exitCode: st.exitCode, result, parameters, artifacts: {}, target: opts.target };
      if (outcome !== 'success') return { ...base, phase: outcome === 'job-failure' ? 'Failed' : 'Error', message: `${opts.describe} ended ${st.state}${st.reason ? `: ${st.reason}` : ''}` };
      const missing = input.outputParameters.filter((p) => p.default === undefined);
      if (missing.length) return { ...base, phase: 'Error', message: `output parameters from files (${missing.map((p) => p.name).join(', ')}) are not read back from ${opts.describe}; give them a default or print them to stdout` };
      return { ...base, phase: 'Succeeded' };
    }
    await ctx.sleep(opts.pollMs);
  }
}
