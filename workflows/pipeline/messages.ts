// Wording shared by the job stages and the pipeline's failure report, kept in one place so the
// single-site and failover paths describe a job's end the same way.
import type { JobStatus } from '../../contract/outcome.js';
import type { Amount } from '../ledger.js';

type Ending = Pick<JobStatus, 'state' | 'reason' | 'tail'>;

const at = (site?: string) => (site ? ` at ${site}` : '');

/** One line for the timeline. `site` is named only where the job may move between sites. */
export function jobEndNote(jobId: string, final: Ending, site?: string): string {
  return `job ${jobId}${at(site)} ended ${final.state}${final.reason ? ` (${final.reason})` : ''}`;
}

/** The failure message, with the job's last output so that the user need not look for its log. */
export function jobEndDetail(stage: string, jobId: string, final: Ending, site?: string): string {
  return `${stage} job ${jobId}${at(site)} ended ${final.state}${final.reason ? `: ${final.reason}` : ''}${final.tail ? `\n--- last output ---\n${final.tail}` : ''}`;
}

export function jobCancelledNote(stage: string, jobId: string, site?: string): string {
  return `${stage} job ${jobId}${at(site)} was cancelled outside Tandem`;
}

/** "1 attempt", "2 failed jobs". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n > 1 ? 's' : ''}`;
}

export function amounts(a: Partial<Amount>): string {
  const n = (v: number, unit: string) => `${v} ${unit}${v === 1 ? '' : 's'}`;
  const parts = [a.cpus && n(a.cpus, 'CPU'), a.gpus && n(a.gpus, 'GPU'), a.memoryMB && `${a.memoryMB} MB`].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing';
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    // An ActivityFailure's own message is generic; the cause carries what went wrong.
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    return cause ?? err.message;
  }
  return String(err);
}
