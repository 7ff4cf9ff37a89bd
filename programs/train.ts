// Built-in training step: a character-level language model (programs/model.ts) trained by minibatch
// SGD on the data set preprocess wrote, checkpointing every N steps and resuming from the newest valid
// checkpoint when restarted (after a crash, preemption or failover) — exactly: the checkpoint holds
// the weights and the minibatch RNG's state, so a resumed run computes what an uninterrupted one would.
// Environment: TANDEM_DATA_DIR, TANDEM_CHECKPOINT_DIR, TANDEM_STEPS, TANDEM_CHECKPOINT_EVERY,
// TANDEM_LEARNING_RATE, TANDEM_STEP_DELAY_MS, TANDEM_JOB_ID, TANDEM_PROGRESS_FILE, TANDEM_SITE,
// TANDEM_FAIL_AT_STEP; optional model shape TANDEM_BATCH, TANDEM_EMBED, TANDEM_HIDDEN (new runs only).
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { latestValidCheckpoint, writeCheckpoint } from '../backends/checkpoints.js';
import { readDataset } from './corpus.js';
import { numberEnv, optionalEnv, requireEnv, writeJsonAtomic } from './env.js';
import { DEFAULT_SHAPE } from './model.js';
import { DEFAULT_BATCH, Trainer } from './training.js';

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

let data;
try {
  data = readDataset(dataDir);
} catch (e) {
  console.error(`train: cannot read the data set in ${dataDir}: ${(e as Error).message}`);
  process.exit(2);
}

const { latest, skipped } = await latestValidCheckpoint(ckptDir);
for (const s of skipped) console.log(`train: skipping checkpoint ${s.path}: ${s.reason}`);
let trainer: Trainer;
if (latest) {
  const read = (f: string) => readFileSync(join(latest.path, f), 'utf8');
  trainer = Trainer.resume(data, { totalSteps: steps, learningRate: lr }, { weights: read('weights.json'), state: read('state.json') });
  console.log(`train: resuming from ${latest.path} at step ${trainer.step}`);
} else {
  const shape = { batch: numberEnv('TANDEM_BATCH', DEFAULT_BATCH), embed: numberEnv('TANDEM_EMBED', DEFAULT_SHAPE.embed), hidden: numberEnv('TANDEM_HIDDEN', DEFAULT_SHAPE.hidden) };
  trainer = Trainer.fresh(data, { totalSteps: steps, learningRate: lr, ...shape });
  const m = trainer.model;
  console.log(`train: new model: ${m.params.length} parameters (vocabulary ${m.V}, context ${m.k}, embedding ${m.E}, hidden ${m.H}), batch ${trainer.options.batch}, seed ${data.meta.seed}`);
}
const resumedFromStep = trainer.step;
// The lineage log lets operators (and tests) see every start of this run's training and where it resumed.
mkdirSync(ckptDir, { recursive: true });
appendFileSync(join(ckptDir, 'lineage.jsonl'), JSON.stringify({ job, pid: process.pid, resumedFromStep, at: new Date().toISOString() }) + '\n');

const started = Date.now();
while (trainer.step < steps) {
  const m = trainer.trainStep();
  const step = trainer.step;
  if (progressFile) writeJsonAtomic(progressFile, { step, total: steps, loss: m.loss, accuracy: m.accuracy, resumedFromStep });
  if (step % every === 0 || step === steps) {
    const train = trainer.takeMeans();
    const valid = trainer.evaluate();
    const metrics = { loss: train.loss, accuracy: train.accuracy, validLoss: valid.loss, validAccuracy: valid.accuracy, vocabSize: trainer.model.V, context: trainer.model.k, parameters: trainer.model.params.length };
    writeCheckpoint(ckptDir, step, trainer.checkpointFiles(), { job, site, metrics });
    console.log(`train: step ${step}/${steps} loss=${train.loss.toFixed(4)} valid_loss=${valid.loss.toFixed(4)} valid_accuracy=${valid.accuracy.toFixed(3)} lr=${trainer.learningRate(step).toFixed(4)} checkpoint saved`);
  }
  if (step === failAt) {
    console.error(`train: injected failure at step ${step} (TANDEM_FAIL_AT_STEP)`);
    process.exit(1);
  }
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
}
if (resumedFromStep === steps) console.log(`train: already complete at step ${steps}`);
else console.log(`train: ${steps - resumedFromStep} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
