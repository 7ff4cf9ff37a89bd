// The label Tandem puts on every job it submits (a Slurm job's comment): which run it belongs to, its
// stage, priority and whether it can resume from a checkpoint. Placement preempts only jobs that carry
// it, so a job Tandem did not submit is never a victim. One token of a conservative character set, so
// that it survives #SBATCH parsing and every API unchanged.
export interface JobLabels {
  /** The workflow id of the run. */
  run: string;
  stage: string;
  priority: number;
  checkpointable: boolean;
}

const PREFIX = 'tandem;';

const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function encodeJobLabels(l: JobLabels): string {
  return `${PREFIX}run=${enc(l.run)};stage=${enc(l.stage)};priority=${Math.trunc(l.priority)};checkpointable=${l.checkpointable ? 1 : 0}`;
}

/** undefined for anything that is not exactly Tandem's label (someone else's comment, say). */
export function decodeJobLabels(comment: string | undefined | null): JobLabels | undefined {
  if (!comment?.startsWith(PREFIX)) return undefined;
  const kv = new Map(comment.slice(PREFIX.length).split(';').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const));
  const run = kv.get('run');
  const priority = Number(kv.get('priority'));
  if (!run || !kv.get('stage') || !Number.isFinite(priority)) return undefined;
  try {
    return { run: decodeURIComponent(run), stage: decodeURIComponent(kv.get('stage')!), priority, checkpointable: kv.get('checkpointable') === '1' };
  } catch {
    return undefined;
  }
}
