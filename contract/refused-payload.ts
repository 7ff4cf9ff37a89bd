// A payload a keyed worker refuses (issue #27, docs/security.md): plaintext from a client without the
// keys, or ciphertext it cannot decrypt (a wrong key, an unknown key id). The worker's codec
// (codec/aes-gcm.ts, `refusePlaintext`) does not throw on such a payload — a throwing codec fails the
// workflow task, and Temporal retries it forever: a run stuck Running — but hands the workflow this
// marker in its place; the workflow's first step fails the run, non-retryable, with the reason in
// clear (`PayloadRefused`: the failure converter leaves that message unencrypted, it holds no data).
// Sandbox-safe.
import { failure } from './failures.js';

export const REFUSED_PAYLOAD_KEY = '$tandemRefusedPayload';

/** Why the worker refused this value, when it is the marker. */
export function refusedReason(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const r = (v as Record<string, unknown>)[REFUSED_PAYLOAD_KEY];
  return typeof r === 'string' ? r : undefined;
}

/** Throws PayloadRefused when a workflow's input is the marker (a workflow's first statement). */
export function refuseUnreadableInput(input: unknown, workflow: string): void {
  const why = refusedReason(input);
  if (why) throw failure('PayloadRefused', `${workflow}: this worker refuses the run's input: ${why}`);
}
