// A bound on a call that may never answer (a firewalled address, a hung site): it fails after `ms`
// instead of stalling its caller. The call itself is not aborted; its late result is dropped.
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(t));
}
