// I/O of the Argo interpreter: pods (container / script / Slurm plugin templates), HTTP templates
// and Kubernetes resources. Pods run on an ExecutionTarget; the local target runs the command on
// this host through LocalJobBackend (detached, deterministic job names, state in files).
//
// The local rule (there is no container runtime here): `image` is ignored; the program is
// `command` (+ `args`), or `script.command` + the script file. The command's first word must exist
// on this host (PATH or absolute path); `python` falls back to `python3`. A container without
// `command` relies on its image's entrypoint, which cannot be known without the image, so it is
// not runnable locally (RuntimeUnavailable). Absolute paths (output parameters, artifacts) are
// host paths; relative ones are relative to the job's directory.
import { Context, ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { accessSync, chmodSync, constants, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { LocalJobBackend, readTail } from '../backends/local-jobs.js';
import type { HttpInput, HttpResult, RunPodInput, RunPodResult } from '../workflows/argo/types.js';

/** Where a pod runs. Slurm and Kubernetes targets are provided by their backends when configured. */
export interface ExecutionTarget {
  readonly name: RunPodInput['target'];
  run(input: RunPodInput, ctx: { heartbeat(details?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult>;
}

export interface ArgoActivityConfig {
  home: string;
  /** Extra targets (slurm, kubernetes) keyed by name. */
  targets?: Partial<Record<RunPodInput['target'], ExecutionTarget>>;
  /** Applies/gets Kubernetes resources for `resource` templates, when a Kubernetes backend exists. */
  kubernetes?: { apply(manifest: string, action: string): Promise<Record<string, string>> };
  /** Local secret store: <dir>/<secret>/<key> files (Kubernetes Secrets stand-in). */
  secretsDir?: string;
  pollInitialMs?: number;
  pollMaxMs?: number;
}

const ALIASES: Record<string, string[]> = { python: ['python3'], python2: ['python3'] };

export function findExecutable(cmd: string): string | undefined {
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
    for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && check(join(dir, c))) return join(dir, c);
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
  const command = input.kind === 'script' ? (input.command.length ? input.command : ['sh']) : input.command;
  if (command.length === 0) {
    return { reason: `container image ${input.image ?? '(none)'} has no command: its entrypoint is unknown without a container runtime` };
  }
  const exe = findExecutable(command[0]!);
  if (!exe) return { reason: `${command[0]} (from image ${input.image ?? '(none)'}) is not installed on this host` };
  const rest = command.slice(1);
  return { argv: input.kind === 'script' ? [exe, ...rest, scriptFile, ...input.args] : [exe, ...rest, ...input.args] };
}

function unavailable(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'RuntimeUnavailable', nonRetryable: true, message });
}

class LocalTarget implements ExecutionTarget {
  readonly name = 'local' as const;
  constructor(
    private readonly backend: LocalJobBackend,
    private readonly cfg: ArgoActivityConfig,
  ) {}

  async run(input: RunPodInput, ctx: { heartbeat(d?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult> {
    const dir = this.backend.jobDir(input.jobName);
    const scriptFile = join(this.cfg.home, 'argo', 'scripts', `${input.jobName}.script`);
    const { argv, reason } = localArgv(input, scriptFile);
    if (!argv) throw unavailable(reason!);
    const env = { ...input.env, ...this.secretEnv(input) };
    const existing = await this.backend.findByName(input.jobName);
    if (!existing) {
      if (input.source !== undefined) {
        mkdirSync(dirname(scriptFile), { recursive: true });
        writeFileSync(scriptFile, input.source);
      }
      for (const a of input.inputArtifacts) this.placeArtifact(a);
      const withCwd = input.workingDir && existsSync(input.workingDir) ? ['/bin/sh', '-c', 'cd "$0" && exec "$@"', input.workingDir, ...argv] : argv;
      await this.backend.submit({ name: input.jobName, command: withCwd, env, resources: { nodes: 1, tasksPerNode: 1, cpusPerTask: 1, gpusPerNode: 0, memoryMB: 1024, walltime: '1h' }, walltimeMs: input.timeoutMs ?? 365 * 86_400_000 });
    }
    let delay = this.cfg.pollInitialMs ?? 50;
    for (;;) {
      const st = await this.backend.status(input.jobName);
      ctx.heartbeat({ state: st.state });
      if (st.state !== 'RUNNING' && st.state !== 'PENDING' && st.state !== 'COMPLETING') {
        const stdout = readTail(join(dir, 'stdout'), 256 * 1024);
        const result = stdout.replace(/\n$/, '');
        const base = (p: string) => (isAbsolute(p) ? p : join(dir, p));
        const parameters: Record<string, string> = {};
        const artifacts: Record<string, string> = {};
        let missing: string | undefined;
        for (const p of input.outputParameters) {
          const file = base(p.path);
          if (existsSync(file) && statSync(file).isFile()) parameters[p.name] = readFileSync(file, 'utf8').trim();
          else if (p.default !== undefined) parameters[p.name] = p.default;
          else if (st.state === 'COMPLETED') missing = `output parameter ${p.name}: ${p.path} does not exist`;
        }
        for (const a of input.outputArtifacts) {
          const src = base(a.path);
          if (!existsSync(src)) {
            if (!a.optional && st.state === 'COMPLETED') missing = `output artifact ${a.name}: ${a.path} does not exist`;
            continue;
          }
          const dest = join(this.cfg.home, 'argo', 'artifacts', input.artifactPrefix, a.name);
          rmSync(dest, { recursive: true, force: true });
          mkdirSync(dirname(dest), { recursive: true });
          cpSync(src, dest, { recursive: true });
          artifacts[a.name] = dest;
        }
        if (st.state === 'COMPLETED') {
          if (missing) return { phase: 'Error', exitCode: 0, result, parameters, artifacts, message: missing, target: 'local' };
          return { phase: 'Succeeded', exitCode: 0, result, parameters, artifacts, target: 'local' };
        }
        const message = st.state === 'TIMEOUT' ? 'Pod was active on the node longer than the specified deadline' : st.state === 'FAILED' ? `Error (exit code ${st.exitCode})` : `${st.state}: ${st.reason ?? ''}`;
        return { phase: st.state === 'FAILED' || st.state === 'TIMEOUT' ? 'Failed' : 'Error', exitCode: st.exitCode, result, parameters, artifacts, message, target: 'local' };
      }
      try {
        await ctx.sleep(delay);
      } catch (e) {
        if (e instanceof CancelledFailure) await this.backend.cancel(input.jobName);
        throw e;
      }
      delay = Math.min(delay * 2, this.cfg.pollMaxMs ?? 1000);
    }
  }

  private placeArtifact(a: RunPodInput['inputArtifacts'][number]): void {
    mkdirSync(dirname(a.path), { recursive: true });
    if (a.raw !== undefined) writeFileSync(a.path, a.raw);
    else if (a.from && existsSync(a.from)) {
      rmSync(a.path, { recursive: true, force: true });
      cpSync(a.from, a.path, { recursive: true });
    } else if (!a.optional) throw unavailable(`input artifact ${a.name}: ${a.from ?? '(no source)'} is not in the local artifact store`);
    if (a.mode !== undefined && existsSync(a.path)) {
      try {
        chmodSync(a.path, a.mode);
      } catch {
        /* best effort, as on a read-only volume */
      }
    }
  }

  /** Secret and ConfigMap values stay out of workflow history: they are read here, at run time. */
  private secretEnv(input: RunPodInput): Record<string, string> {
    const out: Record<string, string> = {};
    const dir = this.cfg.secretsDir ?? join(this.cfg.home, 'argo', 'secrets');
    for (const e of input.envFrom ?? []) {
      const file = join(dir, (e.secret ?? e.configMap)!, e.key);
      if (existsSync(file)) out[e.name] = readFileSync(file, 'utf8');
      else if (!e.optional) throw unavailable(`${e.secret ? 'secret' : 'configmap'} ${(e.secret ?? e.configMap)!}/${e.key} is not in the local store (${dir})`);
    }
    return out;
  }
}


export function createArgoActivities(config: ArgoActivityConfig) {
  const local = new LocalTarget(new LocalJobBackend(config.home), config);
  const targets: Partial<Record<RunPodInput['target'], ExecutionTarget>> = { local, ...config.targets };
  return {
    async argoRunPod(input: RunPodInput): Promise<RunPodResult> {
      const target = targets[input.target];
      if (!target) throw unavailable(`no ${input.target} execution target is configured on this worker (template ${input.templateName})`);
      const ctx = Context.current();
      return target.run(input, { heartbeat: (d) => ctx.heartbeat(d), sleep: (ms) => ctx.sleep(ms) });
    },

    async argoHttp(input: HttpInput): Promise<HttpResult> {
      const res = await fetch(input.url, { method: input.method, headers: input.headers, body: input.body, signal: AbortSignal.timeout(input.timeoutMs ?? 30_000) });
      return { statusCode: res.status, body: await res.text(), headers: Object.fromEntries(res.headers.entries()) };
    },

    async argoResource(input: { manifest: string; action: string }): Promise<{ parameters: Record<string, string> }> {
      if (!config.kubernetes) throw unavailable('resource templates need a Kubernetes backend, and none is configured on this worker');
      return { parameters: await config.kubernetes.apply(input.manifest, input.action) };
    },
  };
}
