// The environment a job Tandem starts on this host begins with. A job never inherits the worker's
// environment: that holds the worker's secrets (the FirecREST client secret, the slurmrestd token, …),
// and a job's output tail, its failure message, the workflow history and `runs export` all carry what
// the job prints. A job gets exactly what its spec and Tandem set, on top of these few variables that
// programs need to behave (find programs, a home, a locale, a time zone, a temp dir, who they run as).
// Every place that spawns a job or a command on the worker's behalf builds its environment here.
// What a spec's `env` may not set at all (LD_PRELOAD, …) is the spec's rule: contract/pipeline.ts.

/** Variables passed through from the worker's environment, by exact name. */
export const JOB_ENV_ALLOWLIST: readonly string[] = ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'USER', 'SHELL'];
/** … and by prefix: the locale categories (LC_ALL, LC_CTYPE, …). */
export const JOB_ENV_ALLOWED_PREFIXES: readonly string[] = ['LC_'];

export function allowedFromWorker(name: string): boolean {
  return JOB_ENV_ALLOWLIST.includes(name) || JOB_ENV_ALLOWED_PREFIXES.some((p) => name.startsWith(p));
}

/** The allowlisted part of the worker's environment (`from`, the process's own by default). */
export function jobBaseEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) if (v !== undefined && allowedFromWorker(k)) out[k] = v;
  return out;
}

/** A job's whole environment: the allowlisted base, then each layer in order (later layers win). */
export function jobEnv(...layers: (Record<string, string> | undefined)[]): Record<string, string> {
  return Object.assign(jobBaseEnv(), ...layers.filter((l) => l !== undefined));
}

/**
 * The first argument or variable that no process can receive (a NUL byte ends a C string; spawn
 * refuses it), as `command[i]` or `env.NAME`. Checked before a job's directory is made, so a bad
 * request leaves nothing behind; specs refuse it earlier, at validation (contract/pipeline.ts).
 */
export function unspawnable(command: readonly string[], env: Record<string, string> = {}): string | undefined {
  const arg = command.findIndex((a) => a.includes('\0'));
  if (arg >= 0) return `command[${arg}]`;
  const name = Object.keys(env).find((k) => k.includes('\0') || k.includes('=') || env[k]!.includes('\0'));
  return name === undefined ? undefined : `env.${name}`;
}
