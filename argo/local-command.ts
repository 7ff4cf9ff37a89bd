// How a pod's command runs on this host without a container runtime: the interpreter of a script,
// the executable found on PATH, the argv. Shared by the lint pass (is this example runnable here?)
// and the local execution target (activities/argo/).
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { RunPodInput } from './lang/types.js';

/** The interpreter named by a script's shebang (`#!/usr/bin/env bash` → bash), sh without one. */
export function shebangCommand(script: string): string[] {
  const m = /^#!\s*(\S+)(.*)$/.exec(script.split('\n')[0] ?? '');
  if (!m) return ['sh'];
  const args = m[2]!.trim().split(/\s+/).filter(Boolean);
  if (m[1]!.endsWith('/env')) {
    const rest = args.filter((a) => !a.startsWith('-'));
    return rest.length ? rest : ['sh'];
  }
  return [m[1]!, ...args];
}

const ALIASES: Record<string, string[]> = { python: ['python3'], python2: ['python3'] };

/**
 * Where a pod's programs are looked up: the system directories its sandbox shows
 * (activities/argo/sandbox.ts SYSTEM_PATHS), not the worker's PATH (~/.pyenv/shims, node_modules/.bin
 * are not in the sandbox, so a program found there would not start in it).
 */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const SYSTEM_DIRS = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/lib32/', '/libx32/'];

export function findExecutable(cmd: string, path: string = process.env.PATH ?? ''): string | undefined {
  const check = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const search = (c: string) => {
    if (c.includes('/')) return check(c) ? c : undefined;
    for (const dir of path.split(delimiter)) if (dir && check(join(dir, c))) return join(dir, c);
    return undefined;
  };
  for (const c of [cmd, ...(ALIASES[cmd] ?? [])]) {
    const found = search(c);
    if (found) return found;
  }
  return undefined;
}

/** The argv a pod runs on this host, or why it cannot run here. */
export function localArgv(input: Pick<RunPodInput, 'kind' | 'command' | 'args' | 'image' | 'source'>, scriptFile: string): { argv?: string[]; reason?: string } {
  // Argo (operator.go executeScript) appends the staged source's path after the container's args, and
  // a script whose source is empty stages nothing and runs as a container (its command and args).
  const script = input.kind === 'script' && !!input.source;
  const command = input.kind === 'plugin' ? shebangCommand(input.source ?? '') : script ? (input.command.length ? input.command : ['sh']) : input.command;
  if (command.length === 0) {
    return { reason: `container image ${input.image ?? '(none)'} has no command: its entrypoint is unknown without a container runtime` };
  }
  const exe = findExecutable(command[0]!, SANDBOX_PATH);
  if (!exe) return { reason: `${command[0]} (from image ${input.image ?? '(none)'}) is not installed on this host` };
  if (!SYSTEM_DIRS.some((d) => exe.startsWith(d))) return { reason: `${command[0]} (from image ${input.image ?? '(none)'}) is outside the system directories a pod's sandbox shows (/usr, /bin, /sbin, /lib*)` };
  const rest = command.slice(1);
  return { argv: script ? [exe, ...rest, ...input.args, scriptFile] : input.kind === 'plugin' ? [exe, ...rest, scriptFile] : [exe, ...rest, ...input.args] };
}
