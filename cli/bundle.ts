// `tandem bundle <file>`: the workers' workflow code, bundled ahead of time (workers/prebuilt-bundle.ts),
// for TANDEM_WORKFLOW_BUNDLE. Built for the workers this environment describes (payload keys from
// TANDEM_CODEC_*, tracing from OTEL_*) unless --encrypted / --tracing say so: a build machine (an image
// build, CI) need not hold the workers' keys, only know that they have some.
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../contract/input-error.js';
import { loadCodecConfig, loadObserveConfig } from '../config/worker.js';
import { workerBundleFlavour, writePrebuiltBundle } from '../workers/prebuilt-bundle.js';

export async function runBundle(file: string, o: { encrypted?: boolean; tracing?: boolean }): Promise<void> {
  const out = resolve(file);
  const dir = dirname(out);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError('bundle', [{ path: '<file>', message: `${dir} is not a directory` }], { message: `tandem bundle: ${dir} is not a directory (the bundle's folder must exist)` });
  if (existsSync(out) && statSync(out).isDirectory()) throw new InputError('bundle', [{ path: '<file>', message: `${out} is a directory` }], { message: `tandem bundle: ${out} is a directory; give the bundle's file name` });
  const flavour = workerBundleFlavour({ encrypted: o.encrypted ?? !!loadCodecConfig(), tracing: o.tracing ?? !!loadObserveConfig().tracing });
  const started = Date.now();
  // Bundling takes seconds of CPU (webpack over the workflow code): say so before the wait.
  process.stderr.write(`tandem bundle: bundling the workflow code of Tandem ${flavour.tandem}…\n`);
  const { bytes } = await writePrebuiltBundle(out, flavour);
  console.log(`wrote ${out} (${(bytes / 1e6).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s): Tandem ${flavour.tandem}, for workers ${flavour.encrypted ? 'with' : 'without'} payload keys, tracing ${flavour.tracing ? 'on' : 'off'}`);
  console.log(`start those workers with TANDEM_WORKFLOW_BUNDLE=${out} (a worker it does not fit refuses it and says why)`);
}
