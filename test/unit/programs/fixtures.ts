// Shared fixtures for the built-in programs' tests: the shipped corpus cut into a data set, and a
// model trained on it for a few hundred steps (cached, so each test file trains it once).
import { readFileSync } from 'node:fs';
import { buildDataset, DEFAULT_CORPUS, type Dataset } from '../../../programs/corpus.js';
import type { CharModel } from '../../../programs/model.js';
import { Trainer } from '../../../programs/training.js';

export function shippedDataset(o: { context?: number; seed?: number; validWindows?: number } = {}): Dataset {
  return buildDataset(readFileSync(DEFAULT_CORPUS, 'utf8'), { source: DEFAULT_CORPUS, context: o.context ?? 8, seed: o.seed ?? 7, validWindows: o.validWindows ?? 500 });
}

export const TRAINED_STEPS = 300;
let trained: { trainer: Trainer; initialLoss: number; firstBatchLoss: number } | undefined;
/** A trainer that has run 300 steps on the shipped corpus (a second or two), with its starting losses. */
export function trainedRun(): { trainer: Trainer; initialLoss: number; firstBatchLoss: number } {
  if (!trained) {
    const trainer = Trainer.fresh(shippedDataset(), { totalSteps: TRAINED_STEPS, learningRate: 2 });
    const initialLoss = trainer.evaluate().loss;
    const firstBatchLoss = trainer.trainStep().loss;
    while (trainer.step < TRAINED_STEPS) trainer.trainStep();
    trained = { trainer, initialLoss, firstBatchLoss };
  }
  return trained;
}
export const trainedModel = (): CharModel => trainedRun().trainer.model;
