// Workflow ids users choose (`tandem run --id`, `tandem runs resume --id`, TandemClient.launch): a
// run's id is also its run key, the name of its directory under TANDEM_HOME/runs (activities/run-store.ts),
// so it is refused at the boundary unless it is one safe path segment: letters, digits, ".", "_" and
// "-", starting with a letter or digit (so never "." or ".."), no "/". Those are exactly the characters
// runDirs keeps, so two ids never share a directory either.
import { InputError } from './input-error.js';

export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
export const RUN_ID_RULE = 'letters, digits, ".", "_" and "-", starting with a letter or digit, at most 200 characters';

/** Throws an InputError naming `field` (e.g. `id`, `newId`) unless `id` is a safe workflow id. */
export function checkRunId(id: string, field = 'id'): string {
  if (RUN_ID.test(id)) return id;
  const message = `workflow id ${JSON.stringify(id)} (${field}) is not allowed: use ${RUN_ID_RULE} (it names the run's directory under TANDEM_HOME)`;
  throw new InputError('workflow id', [{ path: field, message }], { message });
}
