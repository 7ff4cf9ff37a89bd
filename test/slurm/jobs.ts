// Shared helpers for the Slurm suites: job requests and waiting for a state.
import type { JobBackend, JobRequest } from '../../backends/types.js';
import { classifyJobState, type JobStatus } from '../../contract/outcome.js';
import { ResourcesSchema } from '../../contract/pipeline.js';

export function request(name: string, command: string[], over: Partial<JobRequest> = {}): JobRequest {
  return { name, command, env: {}, resources: ResourcesSchema.parse({ memoryMB: 64 }), walltimeMs: 5 * 60_000, ...over };
}

export async function until(backend: JobBackend, jobId: string, pred: (s: JobStatus) => boolean, timeoutMs = 30_000): Promise<JobStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: JobStatus | undefined;
  while (Date.now() < deadline) {
    last = await backend.status(jobId);
    if (pred(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`job ${jobId} did not reach the expected state in ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

export const finished = (s: JobStatus) => classifyJobState(s.state) !== 'active';
export const running = (s: JobStatus) => s.state === 'RUNNING';
