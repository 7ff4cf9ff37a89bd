// Built-in preprocess step: generates a reproducible synthetic classification data set and
// standardises it. Environment: TANDEM_DATA_DIR, TANDEM_SAMPLES, TANDEM_FEATURES, TANDEM_SEED.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { requireEnv, numberEnv, writeJsonAtomic } from './env.js';
import { gaussian, mulberry32 } from './rng.js';
import type { Dataset } from './model.js';

const out = requireEnv('TANDEM_DATA_DIR');
const samples = numberEnv('TANDEM_SAMPLES', 2000);
const features = numberEnv('TANDEM_FEATURES', 8);
const rand = mulberry32(numberEnv('TANDEM_SEED', 42));

const truth = Array.from({ length: features }, () => gaussian(rand) * 2);
const raw = Array.from({ length: samples }, () => Array.from({ length: features }, () => gaussian(rand) * 3 + 1));
const y: number[] = raw.map((x) => (x.reduce((s, v, j) => s + v * truth[j]!, 0) - truth.reduce((s, t) => s + t, 0) + gaussian(rand) * 2 > 0 ? 1 : 0));
const mean = Array.from({ length: features }, (_, j) => raw.reduce((s, x) => s + x[j]!, 0) / samples);
const std = Array.from({ length: features }, (_, j) => Math.sqrt(raw.reduce((s, x) => s + (x[j]! - mean[j]!) ** 2, 0) / samples) || 1);
const x = raw.map((row) => row.map((v, j) => (v - mean[j]!) / std[j]!));

mkdirSync(out, { recursive: true });
const dataset: Dataset = { features, samples, x, y, mean, std };
writeJsonAtomic(join(out, 'dataset.json'), dataset);
const positives = y.reduce((s, v) => s + v, 0);
console.log(`preprocess: wrote ${samples} samples x ${features} features to ${join(out, 'dataset.json')} (${positives} positive)`);
