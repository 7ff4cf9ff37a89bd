// One message for a namespace the server does not have, whichever call found out: the server says it
// three ways (gRPC NOT_FOUND "Namespace x is not found." from visibility and describe, the SDK's
// NamespaceNotFoundError "Namespace not found: 'x'" from start), and describe's NOT_FOUND would
// otherwise read as "no run with id …", sending the user to look for a run instead of the namespace.
import { NamespaceNotFoundError } from '@temporalio/common';

export class NamespaceMissing extends Error {
  override name = 'NamespaceMissing';
  constructor(readonly namespace: string) {
    super(`namespace ${namespace} does not exist on this Temporal server: create it (\`temporal operator namespace create ${namespace}\`) or set TEMPORAL_NAMESPACE / --namespace (or the profile's namespace)`);
  }
}

/** The missing namespace `err` reports, if that is what it is. */
export function missingNamespace(err: unknown): string | undefined {
  if (err instanceof NamespaceMissing || err instanceof NamespaceNotFoundError) return err.namespace;
  const e = err as { code?: number; details?: string; message?: string } | undefined;
  if (e?.code !== 5) return undefined; // gRPC NOT_FOUND
  // The server's whole message (serviceerror.NewNamespaceNotFound), not text that merely contains it.
  return /^(?:5 NOT_FOUND: )?Namespace (\S+) is not found\.?$/.exec(e.details ?? e.message ?? '')?.[1];
}

/** `err` as NamespaceMissing when it reports a missing namespace; otherwise `err` itself. */
export function asNamespaceMissing(err: unknown): unknown {
  const ns = missingNamespace(err);
  return ns !== undefined && !(err instanceof NamespaceMissing) ? new NamespaceMissing(ns) : err;
}
