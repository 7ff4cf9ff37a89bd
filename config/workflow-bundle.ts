// What a prebuilt workflow bundle (`tandem bundle <file>`, TANDEM_WORKFLOW_BUNDLE; written by
// workers/prebuilt-bundle.ts) was built for, recorded in its first line, and whether that fits a worker.
// A bundle is the worker's whole workflow code, so it is right only for the worker it was built for:
//   - the same Tandem: other workflow code may not replay the histories of the runs in flight;
//   - the same failure converter: a worker with payload keys (TANDEM_CODEC_*) bundles the converter that
//     encrypts failure messages; a bundle without it leaves the workflows' own failures in clear;
//   - tracing's workflow interceptors when OTEL_* turns tracing on, none when it is off.
// The worker's configuration (config/worker.ts) refuses a bundle that does not fit, naming the difference,
// before the worker connects.
import { closeSync, openSync, readSync } from 'node:fs';

export interface BundleFlavour {
  /** The Tandem version whose workflow code it holds. */
  tandem: string;
  /** Built for a worker with payload keys (the encrypting failure converter bundled in). */
  encrypted: boolean;
  /** Tracing's workflow interceptors bundled in. */
  tracing: boolean;
}

const MARK = '// tandem-workflow-bundle ';

/** The bundle's first line (a JavaScript comment: the bundle stays valid code). */
export function bundleHeader(f: BundleFlavour): string {
  return `${MARK}${JSON.stringify({ tandem: f.tandem, encrypted: f.encrypted, tracing: f.tracing })}`;
}

/** The flavour a bundle file's first line records; undefined when it has no such line. */
export function readBundleFlavour(file: string): BundleFlavour | undefined {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const n = readSync(fd, head, 0, head.length, 0);
    const line = head.subarray(0, n).toString('utf8').split('\n', 1)[0]!;
    if (!line.startsWith(MARK)) return undefined;
    const f = JSON.parse(line.slice(MARK.length)) as Partial<BundleFlavour>;
    return typeof f.tandem === 'string' && typeof f.encrypted === 'boolean' && typeof f.tracing === 'boolean' ? { tandem: f.tandem, encrypted: f.encrypted, tracing: f.tracing } : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Why a bundle of flavour `found` does not fit a worker that needs `wanted`; undefined when it fits. */
export function bundleMismatch(found: BundleFlavour | undefined, wanted: BundleFlavour): string | undefined {
  const rebuild = 'rebuild it with `tandem bundle <file>` in the environment the worker runs with';
  if (!found) return 'is not a bundle written by `tandem bundle` (its first line has no tandem-workflow-bundle header)';
  const problems: string[] = [];
  if (found.tandem !== wanted.tandem) problems.push(`it holds the workflow code of Tandem ${found.tandem}, and this worker is Tandem ${wanted.tandem} (other workflow code may not replay the runs in flight)`);
  if (found.encrypted !== wanted.encrypted) problems.push(found.encrypted ? 'it was built for a worker with payload keys, and this worker has none (TANDEM_CODEC_*)' : 'it was built for a worker without payload keys, and this worker has keys (TANDEM_CODEC_*): the workflows\' own failure messages would stay in clear');
  if (found.tracing !== wanted.tracing) problems.push(found.tracing ? 'it was built with tracing, and tracing is off for this worker (OTEL_*)' : 'it was built without tracing, and OTEL_* turns tracing on for this worker');
  return problems.length ? `does not fit this worker: ${problems.join('; ')}; ${rebuild}` : undefined;
}
