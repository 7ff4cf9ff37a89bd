// memoize: a template whose key has a fresh entry in its cache is not run; the entry's outputs stand
// in. The cache lives with the activities (argoMemoGet/argoMemoPut), one per `cache.configMap.name`.
import { parseDuration } from '../../contract/duration.js';
import { substitute, type Scope } from '../../argo/lang/tags.js';
import type { Json } from '../../argo/lang/types.js';
import { bindInputs } from './io.js';
import { UserError, type Call } from './model.js';

export function memoCache(memo: Json): { cache: string; maxAgeMs?: number } {
  const cache = String((((memo.cache as Json | undefined)?.configMap as Json | undefined)?.name as string | undefined) ?? 'default');
  const maxAgeMs = memo.maxAge !== undefined && String(memo.maxAge) !== '' ? parseDuration(String(memo.maxAge)) : undefined;
  return { cache, maxAgeMs };
}

/** The call's key, substituted in its input scope; undefined when its inputs do not bind (it then runs uncached, and fails there). */
export function memoKey(memo: Json, call: Call, global: Scope, wfArtifacts: Record<string, Json>): string | undefined {
  try {
    return substitute(String(memo.key ?? ''), bindInputs(call.template, call.args, { ...global, ...call.extra }, wfArtifacts).scope);
  } catch (e) {
    if (e instanceof UserError) return undefined;
    throw e;
  }
}

export function memoHitMessage(cache: string, key: string, nodeId?: string): string {
  return `memoized: cache ${cache} key ${key} (from ${nodeId ?? '?'})`;
}
