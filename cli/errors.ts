// How every `tandem` command reports the error it ends with: in one place, so all bad input reads the same.
import { InputError } from '../contract/input-error.js';
import { codecProblem } from '../codec/problem.js';
import { asNamespaceMissing } from '../sdk/namespace.js';

/**
 * An InputError (a spec, sites or quotas file, Kubernetes options, an Argo manifest) as its issues —
 * its message, formatIssues() — with no stack trace and no prefix; anything else as `tandem: <message>`.
 */
export function printError(err: unknown): void {
  err = asNamespaceMissing(err); // one message, whichever call met the missing namespace
  if (err instanceof InputError) console.error(err.message);
  else console.error(`tandem: ${codecProblem(err) ?? (err as Error).message}`);
}
