// The training loop's state, separate from the job program (programs/train.ts) so that it is tested
// in-process: minibatches drawn from the training split by a seeded RNG, SGD with a linearly decaying
// learning rate, evaluation on fixed windows of the validation split, and the two checkpoint files
// that let a restarted job continue exactly where the checkpoint left off (docs/checkpoint-format.md).
import type { Dataset } from './corpus.js';
import { CharModel, DEFAULT_SHAPE, modelFromWeights, sgdStep, weightsJson } from './model.js';
import { Rng } from './rng.js';

export const TRAIN_STATE_FORMAT = 'tandem-charlm-train/1';

export interface TrainerOptions {
  /** The run's total steps (the learning rate decays over them). */
  totalSteps: number;
  /** The initial learning rate (stages.train.learningRate). */
  learningRate: number;
  /** Windows per minibatch. */
  batch: number;
  embed: number;
  hidden: number;
}

export const DEFAULT_BATCH = 64;

/** state.json in a checkpoint: what continues the run besides the weights. */
export interface TrainStateFile {
  format: typeof TRAIN_STATE_FORMAT;
  step: number;
  /** The minibatch RNG's state (mulberry32, one uint32) after `step` steps. */
  rng: number;
  seed: number;
  batch: number;
  learningRate: number;
  totalSteps: number;
  /** sha256 of the corpus the run trains on: resuming on other data is refused. */
  corpusSha256: string;
}

export interface StepMetrics {
  loss: number;
  accuracy: number;
}

export class Trainer {
  private readonly trainIds: Int32Array;
  private readonly validIds: Int32Array;
  private readonly grad: Float32Array;
  private readonly xs: Int32Array;
  private readonly ys: Int32Array;
  private sum = { loss: 0, accuracy: 0, n: 0 };

  private constructor(
    readonly data: Dataset,
    readonly model: CharModel,
    readonly options: TrainerOptions,
    private readonly rng: Rng,
    public step: number,
  ) {
    this.trainIds = Int32Array.from(model.encode(data.train));
    this.validIds = Int32Array.from(model.encode(data.valid));
    this.grad = new Float32Array(model.params.length);
    this.xs = new Int32Array(options.batch * model.k);
    this.ys = new Int32Array(options.batch);
  }

  /** A new run: weights initialised from the data set's seed. */
  static fresh(data: Dataset, o: Partial<TrainerOptions> & Pick<TrainerOptions, 'totalSteps' | 'learningRate'>): Trainer {
    const options = { batch: DEFAULT_BATCH, ...DEFAULT_SHAPE, ...o };
    const rng = new Rng(data.meta.seed);
    const model = CharModel.init({ vocab: data.meta.vocab, context: data.meta.context, embed: options.embed, hidden: options.hidden }, rng);
    return new Trainer(data, model, options, rng, 0);
  }

  /** Continues a run from a checkpoint's weights.json and state.json. */
  static resume(data: Dataset, o: Pick<TrainerOptions, 'totalSteps' | 'learningRate'>, files: { weights: string; state: string }): Trainer {
    const model = modelFromWeights(files.weights);
    const state = JSON.parse(files.state) as TrainStateFile;
    if (state.format !== TRAIN_STATE_FORMAT) throw new Error(`state.json is not ${TRAIN_STATE_FORMAT} (format ${JSON.stringify(state.format)})`);
    if (state.corpusSha256 !== data.meta.source.sha256) throw new Error(`the checkpoint was trained on another corpus (sha256 ${state.corpusSha256.slice(0, 12)}…, the data set's is ${data.meta.source.sha256.slice(0, 12)}…)`);
    if (model.config.vocab.join('') !== data.meta.vocab.join('') || model.k !== data.meta.context) throw new Error('the checkpoint does not match the data set (vocabulary or context differ)');
    const options = { ...o, batch: state.batch, embed: model.E, hidden: model.H };
    return new Trainer(data, model, options, new Rng(state.rng), state.step);
  }

  /** The learning rate of the next step: linear decay from the initial rate to a tenth of it. */
  learningRate(step = this.step): number {
    const frac = Math.min(1, step / Math.max(1, this.options.totalSteps));
    return this.options.learningRate * (1 - 0.9 * frac);
  }

  /** Fills `xs` (k ids per window, left-padded) and `ys` with windows of `ids` ending before `pos[b]`. */
  private fill(ids: Int32Array, positions: ArrayLike<number>, xs: Int32Array, ys: Int32Array): void {
    const k = this.model.k;
    for (let b = 0; b < positions.length; b++) {
      const p = positions[b]!;
      for (let j = 0; j < k; j++) {
        const q = p - k + j;
        xs[b * k + j] = q >= 0 ? ids[q]! : this.model.pad;
      }
      ys[b] = ids[p]!;
    }
  }

  /** One SGD step on a fresh minibatch; returns the batch's loss and accuracy before the update. */
  trainStep(): StepMetrics {
    const positions = new Int32Array(this.options.batch);
    for (let b = 0; b < positions.length; b++) positions[b] = this.rng.int(this.trainIds.length);
    this.fill(this.trainIds, positions, this.xs, this.ys);
    const m = this.model.lossAndGrad(this.xs, this.ys, this.grad);
    sgdStep(this.model.params, this.grad, this.learningRate());
    this.step++;
    this.sum.loss += m.loss;
    this.sum.accuracy += m.accuracy;
    this.sum.n++;
    return m;
  }

  /** Mean training loss and accuracy over the steps since the last call. */
  takeMeans(): StepMetrics {
    const { loss, accuracy, n } = this.sum;
    this.sum = { loss: 0, accuracy: 0, n: 0 };
    return n === 0 ? { loss: NaN, accuracy: NaN } : { loss: loss / n, accuracy: accuracy / n };
  }

  /** Loss and accuracy on evenly spaced windows of the validation split (the same ones every time). */
  evaluate(): StepMetrics {
    const len = this.validIds.length;
    const n = Math.max(1, Math.min(this.data.meta.validWindows, len));
    const positions = Int32Array.from({ length: n }, (_, i) => Math.floor((i * len) / n));
    const xs = new Int32Array(n * this.model.k);
    const ys = new Int32Array(n);
    this.fill(this.validIds, positions, xs, ys);
    return this.model.lossAndGrad(xs, ys);
  }

  /** The checkpoint's files, as writeCheckpoint takes them. */
  checkpointFiles(): Record<string, string> {
    const state: TrainStateFile = {
      format: TRAIN_STATE_FORMAT,
      step: this.step,
      rng: this.rng.state,
      seed: this.data.meta.seed,
      batch: this.options.batch,
      learningRate: this.options.learningRate,
      totalSteps: this.options.totalSteps,
      corpusSha256: this.data.meta.source.sha256,
    };
    return { 'weights.json': weightsJson(this.model), 'state.json': JSON.stringify(state, null, 2) };
  }
}
