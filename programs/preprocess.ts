// Built-in preprocess step: reads a text corpus (the public-domain one shipped in templates/corpus/
// unless TANDEM_CORPUS names another file), builds its character vocabulary, holds out the last 10%
// for validation, and writes the data set into TANDEM_DATA_DIR: meta.json, train.txt, valid.txt
// (docs/checkpoint-format.md). The spec's preprocess parameters arrive as TANDEM_FEATURES (characters
// of context the model reads), TANDEM_SAMPLES (validation windows evaluated at each checkpoint) and
// TANDEM_SEED (the model's initial weights and minibatch order).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDataset, DEFAULT_CORPUS, MAX_CONTEXT } from './corpus.js';
import { numberEnv, optionalEnv, requireEnv, writeJsonAtomic } from './env.js';

const out = requireEnv('TANDEM_DATA_DIR');
const corpus = optionalEnv('TANDEM_CORPUS') || DEFAULT_CORPUS;
const context = numberEnv('TANDEM_FEATURES', 8);
const validWindows = numberEnv('TANDEM_SAMPLES', 2000);
const seed = numberEnv('TANDEM_SEED', 42);

if (!Number.isInteger(context) || context < 1 || context > MAX_CONTEXT) {
  console.error(`error: TANDEM_FEATURES=${context} (stages.preprocess.features, the characters of context the model reads) must be a whole number from 1 to ${MAX_CONTEXT}`);
  process.exit(2);
}
if (!Number.isInteger(validWindows) || validWindows < 1) {
  console.error(`error: TANDEM_SAMPLES=${validWindows} (stages.preprocess.samples, the validation windows) must be a positive whole number`);
  process.exit(2);
}

let text: string;
try {
  text = readFileSync(corpus, 'utf8');
} catch (e) {
  console.error(`error: cannot read the corpus TANDEM_CORPUS=${corpus}: ${(e as Error).message}`);
  process.exit(2);
}
const data = buildDataset(text, { source: corpus, context, seed, validWindows });
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'train.txt'), data.train);
writeFileSync(join(out, 'valid.txt'), data.valid);
// meta.json last: its presence says the data set is whole.
writeJsonAtomic(join(out, 'meta.json'), data.meta);
const { trainChars, validChars } = data.meta.split;
console.log(`preprocess: ${corpus}: ${data.meta.source.chars} characters, vocabulary of ${data.meta.vocab.length}; ${trainChars} for training, ${validChars} held out; context ${context}, seed ${seed} -> ${out}`);
