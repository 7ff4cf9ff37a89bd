// `tandem bundle <file>`: the worker's workflow bundle, built ahead of time, so that a worker given it
// (TANDEM_WORKFLOW_BUNDLE) starts polling without bundling. Bundling is webpack over the workflow code,
// at every worker start otherwise: measured here (bench/worker-start.ts), most of a worker process's
// start on a quiet 2-core machine, and far more on a loaded one. Temporal recommends the same for
// production workers (bundleWorkflowCode at build time, `workflowBundle: { codePath }` at run time).
// The file's first line says what it was built for (config/workflow-bundle.ts); the worker refuses one
// that does not fit it.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { bundleHeader, type BundleFlavour } from '../config/workflow-bundle.js';
import { tandemVersion } from '../config/version.js';
import { FAILURE_CONVERTER_PATH } from '../codec/index.js';
import { bundleWorkflows } from './worker.js';

/** The flavour a worker with (or without) payload keys and tracing needs, of this Tandem. */
export function workerBundleFlavour(opts: { encrypted: boolean; tracing: boolean }): BundleFlavour {
  return { tandem: tandemVersion(), encrypted: opts.encrypted, tracing: opts.tracing };
}

/**
 * Builds the bundle a worker of `flavour` would build at its start (workers/worker.ts createTandemWorker:
 * the encrypting failure converter with payload keys, tracing's interceptors with tracing) and writes it
 * to `file` whole or not at all.
 */
export async function writePrebuiltBundle(file: string, flavour: BundleFlavour): Promise<{ bytes: number }> {
  if (flavour.tandem !== tandemVersion()) throw new Error(`this is Tandem ${tandemVersion()}: it cannot build the workflow code of Tandem ${flavour.tandem}`);
  // Only the failure converter's path goes into the bundle; the keys never do.
  const { code } = await bundleWorkflows({ dataConverter: flavour.encrypted ? { failureConverterPath: FAILURE_CONVERTER_PATH } : undefined, tracing: flavour.tracing });
  const text = `${bundleHeader(flavour)}\n${code}`;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file); // a worker starting meanwhile reads the old bundle or the new one, never half
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return { bytes: Buffer.byteLength(text) };
}
