// The data set the built-in preprocess step writes and the built-in trainer reads: a text corpus cut
// into a training and a validation split, with its character vocabulary. The format is described in
// docs/checkpoint-format.md ("The data directory").
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The corpus shipped with Tandem (public domain; templates/corpus/README.md says where it is from). */
export const DEFAULT_CORPUS = fileURLToPath(new URL('../templates/corpus/pride-and-prejudice-1-20.txt', import.meta.url));

export const DATA_FORMAT = 'tandem-chars/1';
/** The share of the corpus, taken from its end, that is held out for validation. */
export const VALID_FRACTION = 0.1;
/** Longest context the built-in model takes (a longer one makes a training step slow, not better). */
export const MAX_CONTEXT = 64;

export interface DataMeta {
  format: typeof DATA_FORMAT;
  source: { path: string; sha256: string; chars: number };
  /** Every character of the corpus, sorted by code point; a character's index is its token id. */
  vocab: string[];
  /** Characters of context the model reads (the spec's stages.preprocess.features). */
  context: number;
  /** Seeds the model's initial weights and the minibatch order (stages.preprocess.seed). */
  seed: number;
  /** Validation windows evaluated at each checkpoint (stages.preprocess.samples). */
  validWindows: number;
  split: { trainChars: number; validChars: number };
}

export interface Dataset {
  meta: DataMeta;
  train: string;
  valid: string;
}

/** Cuts a corpus into the data set: the vocabulary, the training text and the held-out tail. */
export function buildDataset(text: string, o: { source: string; context: number; seed: number; validWindows: number }): Dataset {
  const chars = Array.from(text);
  if (chars.length < 1000) throw new Error(`the corpus ${o.source} has ${chars.length} characters; at least 1000 are needed`);
  const vocab = [...new Set(chars)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const cut = Math.floor(chars.length * (1 - VALID_FRACTION));
  const train = chars.slice(0, cut).join('');
  const valid = chars.slice(cut).join('');
  const meta: DataMeta = {
    format: DATA_FORMAT,
    source: { path: o.source, sha256: createHash('sha256').update(text).digest('hex'), chars: chars.length },
    vocab,
    context: o.context,
    seed: o.seed,
    validWindows: o.validWindows,
    split: { trainChars: cut, validChars: chars.length - cut },
  };
  return { meta, train, valid };
}

export function readDataset(dir: string): Dataset {
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as DataMeta;
  if (meta.format !== DATA_FORMAT) throw new Error(`${join(dir, 'meta.json')} is not a ${DATA_FORMAT} data set (format ${JSON.stringify(meta.format)}); run the preprocess stage first`);
  return { meta, train: readFileSync(join(dir, 'train.txt'), 'utf8'), valid: readFileSync(join(dir, 'valid.txt'), 'utf8') };
}
