// Built-in training step: logistic regression by gradient descent, checkpointing every N steps and
// resuming from the newest valid checkpoint when restarted (after a crash, preemption or failover).
// Environment: TANDEM_DATA_DIR, TANDEM_CHECKPOINT_DIR, TANDEM_STEPS, TANDEM_CHECKPOINT_EVERY,
// TANDEM_LEARNING_RATE, TANDEM_STEP_DELAY_MS, TANDEM_JOB_ID, TANDEM_PROGRESS_FILE.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { latestValidCheckpoint, writeCheckpoint } from '../backends/checkpoints.js';
import { requireEnv, numberEnv, optionalEnv, writeJsonAtomic } from './env.js';
import { gradientStep, type Dataset, type Weights } from './model.js';

const dataDir = requireEnv('TANDEM_DATA_DIR');
const ckptDir = requireEnv('TANDEM_CHECKPOINT_DIR');
const steps = numberEnv('TANDEM_STEPS', 200);
const every = numberEnv('TANDEM_CHECKPOINT_EVERY', 20);
const lr = numberEnv('TANDEM_LEARNING_RATE', 0.5);
const delay = numberEnv('TANDEM_STEP_DELAY_MS', 0);
const job = optionalEnv('TANDEM_JOB_ID') ?? `pid-${process.pid}`;
const progressFile = optionalEnv('TANDEM_PROGRESS_FILE');
const site = optionalEnv('TANDEM_SITE') ?? 'local';
// Fault injection for chaos drills and tests: exit non-zero on reaching this step.
const failAt = numberEnv('TANDEM_FAIL_AT_STEP', 0);

const data = JSON.parse(readFileSync(join(dataDir, 'dataset.json'), 'utf8')) as Dataset;
let weights: Weights = { w: new Array<number>(data.features).fill(0), b: 0 };
let step = 0;

const { latest, skipped } = await latestValidCheckpoint(ckptDir);
for (const s of skipped) console.log(`train: skipping checkpoint ${s.path}: ${s.reason}`);
if (latest) {
  weights = JSON.parse(readFileSync(join(latest.path, 'weights.json'), 'utf8')) as Weights;
  step = latest.step;
  console.log(`train: resuming from ${latest.path} at step ${step}`);
}
const resumedFromStep = step;
// The lineage log lets operators (and tests) see every start of this run's training and where it resumed.
mkdirSync(ckptDir, { recursive: true });
appendFileSync(join(ckptDir, 'lineage.jsonl'), JSON.stringify({ job, pid: process.pid, resumedFromStep, at: new Date().toISOString() }) + '\n');

const save = (metrics: { loss: number; accuracy: number }) =>
  writeCheckpoint(ckptDir, step, { 'weights.json': JSON.stringify(weights) }, { job, site, metrics: { ...metrics, features: data.features } });

let metrics = { loss: NaN, accuracy: NaN };
while (step < steps) {
  metrics = gradientStep(weights, data, lr);
  step++;
  if (progressFile) writeJsonAtomic(progressFile, { step, total: steps, loss: metrics.loss, accuracy: metrics.accuracy, resumedFromStep });
  if (step % every === 0 || step === steps) {
    save(metrics);
    console.log(`train: step ${step}/${steps} loss=${metrics.loss.toFixed(4)} accuracy=${metrics.accuracy.toFixed(3)} checkpoint saved`);
  }
  if (step === failAt) {
    console.error(`train: injected failure at step ${step} (TANDEM_FAIL_AT_STEP)`);
    process.exit(1);
  }
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
}
if (resumedFromStep === steps) console.log(`train: already complete at step ${steps}`);
