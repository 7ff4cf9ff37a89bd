// An error and its causes, outermost first: the Temporal SDK wraps a server's gRPC status (its code and
// message) in ServiceErrors ("Failed to start Workflow", "Failed to connect"), so what callers must
// read — a status code, the server's words — sits one or more causes deep.
export interface ChainLink {
  /** The link itself (for instanceof checks). */
  error: object;
  message?: string;
  /** A gRPC status code (or an errno-like code) where the link carries one. */
  code?: unknown;
}

export function errorChain(e: unknown, depth = 5): ChainLink[] {
  const out: ChainLink[] = [];
  for (let x = e as { message?: unknown; code?: unknown; cause?: unknown } | undefined, i = 0; x && typeof x === 'object' && i < depth; x = x.cause as typeof x, i++) {
    out.push({ error: x, message: typeof x.message === 'string' ? x.message : undefined, code: x.code });
  }
  return out;
}

/** The chain's messages, outermost first, each once: "Failed to connect" and what the server or TLS layer said beneath it. */
export function chainMessages(e: unknown): string {
  return [...new Set(errorChain(e).flatMap((l) => (l.message ? [l.message] : [])))].join(': ');
}

/** The first numeric code along the chain (a gRPC status), if any. */
export function grpcCodeOf(e: unknown): number | undefined {
  return errorChain(e).find((l) => typeof l.code === 'number')?.code as number | undefined;
}

// gRPC codes that mean "try again later": DEADLINE_EXCEEDED (a query no worker answered in time, a
// loaded frontend), RESOURCE_EXHAUSTED (rate limits), UNAVAILABLE (a frontend restarting).
const TRANSIENT_GRPC = new Set([4, 8, 14]);

/** Whether a server's answer along the chain says the same call may succeed if tried again. */
export function isTransientGrpc(e: unknown): boolean {
  return errorChain(e).some((l) => typeof l.code === 'number' && TRANSIENT_GRPC.has(l.code));
}
