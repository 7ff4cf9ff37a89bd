// What the run page shows of training: the run's checkpoints with their verification state, and the
// loss curve. Nothing here is made up: every point comes from a record the run left behind —
//   1. the checkpoint manifests under the worker's home (`metrics.loss` / `validLoss` at each step,
//      written by programs/train.ts; retention keeps only the newest few),
//   2. the train job's own output on the local runtime (`train: step N/M loss=… valid_loss=…`, the line
//      programs/train.ts prints at every checkpoint, so the points retention removed are there too),
//   3. the history: the catalogued checkpoint's metrics (catalogCheckpoint's result) and the final
//      progress of each watched job (awaitJob's result), for runs whose home this process cannot read.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listCheckpoints, verifyCheckpoint } from '../backends/checkpoints.js';
import { runDirs } from '../activities/run-store.js';
import { localJobDir } from '../argo/client.js';
import type { RunReport } from '../sdk/history.js';
import type { JobProgress, JobStatus } from '../contract/outcome.js';

export interface LossPoint {
  step: number;
  loss?: number;
  validLoss?: number;
  source: 'checkpoint' | 'job output' | 'history';
}

export interface CheckpointView {
  step: number;
  path: string;
  created?: string;
  job?: string;
  site?: string;
  valid: boolean;
  reason?: string;
  loss?: number;
  validLoss?: number;
}

export interface TrainingView {
  checkpoints: CheckpointView[];
  loss: LossPoint[];
  /** Where the checkpoints were looked for (empty without a home). */
  lookedIn?: string;
}

/** The last `max` bytes of a file: job output can be long. */
export function readTail(file: string, max = 256 * 1024): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  const start = Math.max(0, size - max);
  const buf = Buffer.alloc(size - start);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

// programs/train.ts: `train: step ${step}/${steps} loss=${…} valid_loss=${…} …`
const TRAIN_LINE = /^train: step (\d+)\/\d+ loss=([0-9.eE+-]+|NaN) valid_loss=([0-9.eE+-]+|NaN)/;

export function lossFromOutput(text: string): LossPoint[] {
  const out: LossPoint[] = [];
  for (const line of text.split('\n')) {
    const m = TRAIN_LINE.exec(line);
    if (m) out.push({ step: Number(m[1]), loss: finite(Number(m[2])), validLoss: finite(Number(m[3])), source: 'job output' });
  }
  return out;
}

const finite = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : undefined);

function lossFromHistory(report: RunReport): LossPoint[] {
  const out: LossPoint[] = [];
  for (const a of report.activities) {
    if (a.outcome !== 'completed' || !a.result) continue;
    if (a.type === 'catalogCheckpoint') {
      const e = a.result as { step?: number; metrics?: Record<string, number> };
      if (typeof e.step === 'number' && e.metrics) out.push({ step: e.step, loss: finite(e.metrics.loss), validLoss: finite(e.metrics.validLoss), source: 'history' });
    } else if (a.type === 'awaitJob' && a.stage === 'train') {
      const p: JobProgress | undefined = (a.result as JobStatus).progress;
      if (p && finite(p.loss) !== undefined) out.push({ step: p.step, loss: p.loss, source: 'history' });
    }
  }
  return out;
}

/** Points by step; an earlier source in the list above wins for the same step. */
function merge(...sources: LossPoint[][]): LossPoint[] {
  const by = new Map<number, LossPoint>();
  for (const src of sources) for (const p of src) if (!by.has(p.step) && (p.loss !== undefined || p.validLoss !== undefined)) by.set(p.step, p);
  return [...by.values()].sort((a, b) => a.step - b.step);
}

export async function trainingView(report: RunReport, home: string | undefined): Promise<TrainingView> {
  const checkpoints: CheckpointView[] = [];
  const fromOutput: LossPoint[] = [];
  let lookedIn: string | undefined;
  if (home && report.input) {
    const dirs = runDirs(home, report.input.resume?.runKey ?? report.workflowId);
    lookedIn = dirs.checkpoints;
    for (const c of listCheckpoints(dirs.checkpoints)) {
      const v = await verifyCheckpoint(c.path, true).catch((e: Error) => ({ ok: false as const, reason: `could not verify: ${e.message}` }));
      const m = v.ok ? v.manifest : undefined;
      checkpoints.push({ step: c.step, path: c.path, created: m?.created, job: m?.job, site: m?.site, valid: v.ok, reason: v.ok ? undefined : v.reason, loss: finite(m?.metrics?.loss), validLoss: finite(m?.metrics?.validLoss) });
    }
    const train = report.stages.find((s) => s.name === 'train');
    for (const j of train?.jobs ?? []) {
      if (j.runtime !== 'local' || !/^[A-Za-z0-9._-]+$/.test(j.jobId)) continue;
      fromOutput.push(...lossFromOutput(readTail(join(localJobDir(home, j.jobId), 'stdout'))));
    }
  }
  const fromManifests = checkpoints.filter((c) => c.valid).map((c): LossPoint => ({ step: c.step, loss: c.loss, validLoss: c.validLoss, source: 'checkpoint' }));
  return { checkpoints, loss: merge(fromManifests, fromOutput, lossFromHistory(report)), lookedIn };
}
