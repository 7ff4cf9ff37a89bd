// The local execution target: an Argo pod (container / script / Slurm plugin template) runs as a
// command on this host through LocalJobBackend (detached, deterministic job names, state in files),
// each in a bubblewrap sandbox of its own (./sandbox.ts): its own root, /tmp, working directory and
// emptyDir volumes under <home>/argo/pods/<job>/, the host read-only, limits applied.
//
// The local rule (there is no container runtime here): `image` is ignored; the program is
// `command` (+ `args`), or `script.command` + the script file (staged at /argo/staging/script in the
// pod, as Argo stages it). The command's first word must exist on this host (PATH or absolute path);
// `python` falls back to `python3`. A container without `command` relies on its image's entrypoint,
// which cannot be known without the image, so it is not runnable locally (RuntimeUnavailable). The
// working directory is `workingDir`, or `/` of the pod (most images' WORKDIR); a path the pod writes
// is read back from its root or volumes (sandbox.ts `hostPath`).
import { CancelledFailure, Context, type ApplicationFailure } from '@temporalio/activity';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { LocalJobBackend, readTail } from '../../backends/local-jobs.js';
import { jobBaseEnv } from '../../backends/job-env.js';
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import { localArgv } from '../../argo/local-command.js';
import { failure } from '../../contract/failures.js';
import { absolutePodPath, bwrapBinary, cpuCores, hostPath, memoryBytes, readableFor, sandboxArgs, SandboxUnavailable, shellQuote, visibleUnder, type SandboxContainer } from './sandbox.js';
import { slurmJobSpec, type SlurmJobSpec } from './slurm-job.js';
import type { ArgoActivityConfig, ExecutionTarget } from './target.js';

// Drops srun's options (attached values, `--opt=v`, and `-x v` for the options that take one) and
// runs the command once: a one-node stand-in for an allocation.
const SRUN_SHIM = `#!/bin/sh
# Tandem: srun stand-in for Slurm steps run locally (no Slurm target on this worker).
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    --*=*) shift ;;
    -N|-n|-c|-t|-p|-A|-J|-w|-G|-m|-C|-q|--nodes|--ntasks|--ntasks-per-node|--cpus-per-task|--gpus|--gpus-per-node|--gpus-per-task|--mem|--mem-per-cpu|--time|--partition|--account|--job-name|--nodelist|--gres|--constraint|--reservation|--qos|--mpi|--cpu-bind|--distribution|--export) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
exec "$@"
`;

/** Where a script template's source is in the pod, as Argo stages it. */
const STAGED_SCRIPT = '/argo/staging/script';
/** The pod's own bin directory with the srun stand-in (Slurm steps run locally). */
const SHIM_DIR = '/argo/bin';

/** The largest output parameter read back from a pod (Argo's own limit on a parameter is far lower). */
const MAX_PARAMETER_BYTES = 1024 * 1024;

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** Why a failed pod may have failed: a limit it was given (RLIMIT_CPU ends it with SIGXCPU, 128+24). */
function limitHint(input: RunPodInput, exitCode: number | undefined): string {
  if (exitCode === 152 && input.limits?.cpu !== undefined) return `: CPU time limit reached (limits.cpu ${input.limits.cpu} over the ${(input.timeoutMs ?? 0) / 1000} s deadline)`;
  if (input.limits?.memory !== undefined) return ` (memory limit ${input.limits.memory})`;
  return '';
}

export function unavailable(message: string): ApplicationFailure {
  return failure('RuntimeUnavailable', message);
}

export class LocalTarget implements ExecutionTarget {
  readonly name = 'local' as const;
  constructor(
    private readonly backend: LocalJobBackend,
    private readonly cfg: ArgoActivityConfig,
  ) {}

  async run(input: RunPodInput, ctx: { heartbeat(d?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult> {
    const dir = this.backend.jobDir(input.jobName);
    const podDir = join(this.cfg.home, 'argo', 'pods', input.jobName);
    const job = input.slurm ? slurmJobSpec(input.slurm) : undefined;
    if (input.kind === 'plugin' && job) input = { ...input, source: job.script };
    const { argv, reason } = localArgv(input, STAGED_SCRIPT);
    if (!argv) throw unavailable(reason!);
    const main = this.mainContainer(input, argv);
    const layout = { root: join(podDir, 'main', 'root'), volumesDir: join(podDir, 'volumes') };
    const existing = await this.backend.findByName(input.jobName);
    if (!existing) {
      const env = { ...input.env, ...(job ? this.slurmEnv(input, job, layout.root) : {}), ...this.secretEnv(input) };
      const command = this.podCommand(input, main, layout, podDir);
      if (input.source !== undefined) {
        const file = hostPath(main, layout, STAGED_SCRIPT);
        mkdirSync(dirname(file), { recursive: true });
        // Executable, as Argo's staged script is: `command: [sh, -c]` runs the file by its path.
        writeFileSync(file, input.source, { mode: 0o755 });
      }
      for (const a of input.inputArtifacts) this.placeArtifact(a, hostPath(main, layout, a.path));
      await this.backend.submit({ name: input.jobName, command, env, resources: { nodes: 1, tasksPerNode: 1, cpusPerTask: 1, gpusPerNode: 0, memoryMB: 1024, walltime: '1h' }, walltimeMs: input.timeoutMs ?? 365 * 86_400_000 });
    }
    let delay = this.cfg.pollInitialMs ?? 50;
    for (;;) {
      const st = await this.backend.status(input.jobName);
      ctx.heartbeat({ state: st.state });
      if (st.state !== 'RUNNING' && st.state !== 'PENDING' && st.state !== 'COMPLETING') {
        // A retried activity (the worker died after the pod's sandbox was released) reports what was collected.
        const settled = readSettled(podDir);
        if (settled) return settled;
        const stdout = readTail(join(dir, 'stdout'), 256 * 1024);
        const result = stdout.replace(/\n$/, '');
        const parameters: Record<string, string> = {};
        const artifacts: Record<string, string> = {};
        let missing: string | undefined;
        for (const p of input.outputParameters) {
          const file = hostPath(main, layout, p.path);
          // Read on the pod's behalf: never through a link it planted to something it cannot see, never unbounded.
          if (existsSync(file) && !readableFor(main, layout, file)) missing = `output parameter ${p.name}: ${p.path} leads outside the pod's own files`;
          else if (existsSync(file) && statSync(file).isFile() && statSync(file).size > MAX_PARAMETER_BYTES) missing = `output parameter ${p.name}: ${p.path} is larger than ${MAX_PARAMETER_BYTES} bytes`;
          else if (existsSync(file) && statSync(file).isFile()) parameters[p.name] = readFileSync(file, 'utf8').trim();
          else if (p.default !== undefined) parameters[p.name] = p.default;
          else if (st.state === 'COMPLETED') missing = `output parameter ${p.name}: ${p.path} does not exist`;
        }
        for (const a of input.outputArtifacts) {
          const src = hostPath(main, layout, a.path);
          if (existsSync(src) && !readableFor(main, layout, src)) {
            missing = `output artifact ${a.name}: ${a.path} leads outside the pod's own files`;
            continue;
          }
          // A directory the pod saw partly as host content (/etc: the host's files bound read-only into
          // it) is collected as the pod saw it: its own root's files and those bound entries.
          const shown = visibleUnder(main, layout, a.path);
          if (!existsSync(src) && !shown.length) {
            if (!a.optional && st.state === 'COMPLETED') missing = `output artifact ${a.name}: ${a.path} does not exist`;
            continue;
          }
          const dest = join(this.cfg.home, 'argo', 'artifacts', input.artifactPrefix, a.name);
          rmSync(dest, { recursive: true, force: true });
          mkdirSync(dirname(dest), { recursive: true });
          // Links inside the artifact stay links (as written, meaningful in a pod), and never to host files it cannot see.
          const copy = { recursive: true, verbatimSymlinks: true, filter: (f: string) => !lstatSync(f).isSymbolicLink() || readableFor(main, layout, f) };
          if (existsSync(src)) cpSync(src, dest, copy);
          else mkdirSync(dest);
          for (const v of shown) cpSync(v, join(dest, relative(absolutePodPath(main, a.path), v)), copy);
          artifacts[a.name] = dest;
        }
        if (st.state === 'COMPLETED' || (missing && / leads outside | larger than /.test(missing))) {
          if (missing) return settle(podDir, { phase: 'Error', exitCode: 0, result, parameters, artifacts, message: missing, target: 'local' });
          return settle(podDir, { phase: 'Succeeded', exitCode: 0, result, parameters, artifacts, target: 'local' });
        }
        const init = existsSync(join(podDir, 'init-failed')) ? readFileSync(join(podDir, 'init-failed'), 'utf8').trim() : undefined;
        const message =
          st.state === 'TIMEOUT'
            ? 'Pod was active on the node longer than the specified deadline'
            : init
              ? `init container ${init} failed (exit code ${st.exitCode})`
              : st.state === 'FAILED'
                ? `Error (exit code ${st.exitCode})${limitHint(input, st.exitCode)}`
                : `${st.state}: ${st.reason ?? ''}`;
        return settle(podDir, { phase: st.state === 'FAILED' || st.state === 'TIMEOUT' ? 'Failed' : 'Error', exitCode: st.exitCode, result, parameters, artifacts, message, target: 'local' });
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

  /** The main container as the sandbox sees it: its paths, mounts and limits. */
  private mainContainer(input: RunPodInput, argv: string[]): SandboxContainer {
    const memory = input.limits?.memory !== undefined ? memoryBytes(input.limits.memory) : undefined;
    if (input.limits?.memory !== undefined && memory === undefined) throw unavailable(`resources.limits.memory ${input.limits.memory} is not a Kubernetes quantity`);
    const cores = input.limits?.cpu !== undefined ? cpuCores(input.limits.cpu) : undefined;
    if (input.limits?.cpu !== undefined && cores === undefined) throw unavailable(`resources.limits.cpu ${input.limits.cpu} is not a Kubernetes quantity`);
    return {
      argv,
      workingDir: input.workingDir,
      volumeMounts: this.checkedMounts(input, input.volumeMounts ?? []),
      ownPaths: [...input.outputParameters.map((p) => p.path), ...input.outputArtifacts.map((a) => a.path), ...input.inputArtifacts.map((a) => a.path), ...(input.source !== undefined ? [STAGED_SCRIPT] : []), ...(input.slurm ? [SHIM_DIR] : [])],
      memoryBytes: memory,
      // A CPU limit is a rate; over the pod's deadline it bounds the CPU time the pod may use.
      cpuSeconds: cores !== undefined && input.timeoutMs !== undefined ? Math.max(1, Math.ceil((cores * input.timeoutMs) / 1000)) : undefined,
    };
  }

  /**
   * emptyDir volumes are the pod's; a hostPath volume is this host's directory, as on a node (asked for
   * by the workflow, as in Kubernetes). Any other kind would silently be an empty directory: refused.
   */
  private checkedMounts(input: RunPodInput, mounts: NonNullable<RunPodInput['volumeMounts']>): SandboxContainer['volumeMounts'] {
    return mounts.map((m) => {
      const v = input.volumes?.find((x) => x.name === m.name);
      const kind = v?.kind ?? 'undeclared';
      if (kind === 'hostPath' && v?.hostPath) return { ...m, hostPath: this.allowedHostPath(m.name, v.hostPath) };
      if (kind !== 'emptyDir') throw unavailable(kind === 'undeclared' ? `volumeMount ${m.name}: no volume of that name in the template or the workflow` : `volume ${m.name}: ${kind} volumes need Kubernetes (emptyDir and hostPath run on this host)`);
      return m;
    });
  }

  /**
   * A hostPath volume is a privileged request (Kubernetes leaves it to admission policy): here it must lie
   * inside one of the worker's hostPathRoots (the temp directory by default), and never overlap Tandem's own
   * state — TANDEM_HOME, the secret and ConfigMap stores, the memoize caches — whichever root it is in.
   */
  private allowedHostPath(name: string, path: string): string {
    const p = real(path);
    const roots = (this.cfg.hostPathRoots ?? [tmpdir()]).map(real);
    const own = [this.cfg.home, this.cfg.secretsDir, this.cfg.configMapsDir, this.cfg.memoDir].filter((d): d is string => d !== undefined).map(real);
    const clash = own.find((d) => under(p, d) || under(d, p));
    if (clash !== undefined) throw unavailable(`volume ${name}: hostPath ${path} overlaps this worker's own state (${clash}), which no pod may mount`);
    if (!roots.some((r) => under(p, r) && p !== r)) throw unavailable(`volume ${name}: hostPath ${path} is outside the directories this worker lets pods mount (${roots.join(', ')})`);
    return p;
  }

  /** The job's command: bwrap for the main container, after the init containers in order when there are any. */
  private podCommand(input: RunPodInput, main: SandboxContainer, layout: { root: string; volumesDir: string }, podDir: string): string[] {
    let bwrap: string;
    try {
      bwrap = bwrapBinary();
      const mainArgv = [bwrap, ...sandboxArgs(main, layout)];
      if (!input.initContainers?.length) return mainArgv;
      const lines = ['set -u'];
      for (const [i, c] of input.initContainers.entries()) {
        const { argv, reason } = localArgv({ kind: 'container', command: c.command, args: c.args, image: c.image }, STAGED_SCRIPT);
        if (!argv) throw unavailable(`init container ${c.name}: ${reason!}`);
        const spec: SandboxContainer = { argv, workingDir: c.workingDir, volumeMounts: this.checkedMounts(input, c.volumeMounts), ownPaths: [] };
        const own = { root: join(podDir, `init-${i}`, 'root'), volumesDir: layout.volumesDir };
        const q = [bwrap, ...sandboxArgs(spec, own)].map(shellQuote).join(' ');
        // An init container that fails fails the pod (Init:Error); its output is its own log.
        lines.push(`${q} >${shellQuote(join(podDir, `init-${i}.log`))} 2>&1 || { rc=$?; printf %s ${shellQuote(c.name)} >${shellQuote(join(podDir, 'init-failed'))}; exit $rc; }`);
      }
      lines.push(`exec ${mainArgv.map(shellQuote).join(' ')}`);
      return ['/bin/sh', '-c', lines.join('\n')];
    } catch (e) {
      if (e instanceof SandboxUnavailable) throw unavailable(e.message);
      throw e;
    }
  }

  /** An input artifact at its declared path in the pod (`to`, the host path behind it). */
  private placeArtifact(a: RunPodInput['inputArtifacts'][number], to: string): void {
    mkdirSync(dirname(to), { recursive: true });
    if (a.raw !== undefined) writeFileSync(to, a.raw);
    else if (a.from && existsSync(a.from)) {
      rmSync(to, { recursive: true, force: true });
      cpSync(a.from, to, { recursive: true });
    } else if (!a.optional) throw unavailable(`input artifact ${a.name}: ${a.from ?? '(no source)'} is not in the local artifact store`);
    if (a.mode !== undefined && existsSync(to) && !lstatSync(to).isSymbolicLink()) {
      try {
        chmodSync(to, a.mode);
      } catch {
        /* best effort, as on a read-only volume */
      }
    }
  }

  /** What a one-node allocation of the requested shape would set, and the srun stand-in on PATH. */
  private slurmEnv(input: RunPodInput, job: SlurmJobSpec, root: string): Record<string, string> {
    // The shim lives in the pod's own root (the host's home may be hidden under its /tmp).
    const bin = join(root, SHIM_DIR);
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'srun'), SRUN_SHIM, { mode: 0o755 });
    return {
      ...job.env,
      PATH: `${SHIM_DIR}${delimiter}${jobBaseEnv().PATH ?? ''}`,
      SLURM_JOB_ID: input.jobName,
      SLURM_JOB_NAME: job.jobName ?? input.jobName,
      SLURM_JOB_NUM_NODES: String(job.nodes),
      SLURM_NNODES: String(job.nodes),
      SLURM_NTASKS: String(job.nodes * job.tasksPerNode),
      SLURM_NTASKS_PER_NODE: String(job.tasksPerNode),
      SLURM_CPUS_PER_TASK: String(job.cpusPerTask),
      SLURM_GPUS_PER_NODE: String(job.gpusPerNode),
      SLURM_JOB_PARTITION: job.partition ?? 'local',
      SLURM_JOB_NODELIST: 'localhost',
      SLURM_SUBMIT_DIR: input.workingDir ?? '/',
      TANDEM_SLURM_FALLBACK: 'local',
    };
  }

  /** Secret and ConfigMap values stay out of workflow history: they are read here, at run time. */
  private secretEnv(input: RunPodInput): Record<string, string> {
    const out: Record<string, string> = {};
    const dir = this.cfg.secretsDir ?? join(this.cfg.home, 'argo', 'secrets');
    for (const e of input.envFrom ?? []) {
      const store = (e.secret ?? e.configMap)!;
      // A name is one path component: `../other-tenant` never leaves the store.
      for (const [what, v] of [['name', store], ['key', e.key]] as const) {
        if (!/^[A-Za-z0-9._-]+$/.test(v) || v === '.' || v === '..') throw failure('InvalidRequest', `${e.secret ? 'secret' : 'configmap'} ${what} ${JSON.stringify(v)} is not a valid Kubernetes name`);
      }
      const file = join(dir, store, e.key);
      if (existsSync(file)) out[e.name] = readFileSync(file, 'utf8');
      else if (!e.optional) throw unavailable(`${e.secret ? 'secret' : 'configmap'} ${(e.secret ?? e.configMap)!}/${e.key} is not in the local store (${dir})`);
    }
    return out;
  }
}

const SETTLED = 'result.json';

/**
 * Once a pod has ended and its outputs are collected (parameters read, artifacts copied to the
 * artifact store), its sandbox — root filesystem, emptyDir volumes, init containers' roots — is
 * released, as a node deletes a finished pod's writable layer; the pod's log stays in its job
 * directory (`tandem argo logs`). The collected result is kept beside it first, so a retried activity
 * reports the same result instead of finding the outputs gone.
 */
function settle(podDir: string, r: RunPodResult): RunPodResult {
  try {
    writeFileSync(join(podDir, SETTLED), JSON.stringify(r));
    for (const e of readdirSync(podDir)) if (e !== SETTLED) rmSync(join(podDir, e), { recursive: true, force: true });
  } catch (e) {
    // Never a pod failure: at worst its files stay behind until the run directory is removed.
    const warning = { podDir, error: (e as Error).message };
    try {
      Context.current().log.warn('could not release a finished pod sandbox', warning);
    } catch {
      console.warn('could not release a finished pod sandbox', warning); // outside an activity (tests)
    }
  }
  return r;
}

function readSettled(podDir: string): RunPodResult | undefined {
  try {
    return JSON.parse(readFileSync(join(podDir, SETTLED), 'utf8')) as RunPodResult;
  } catch {
    return undefined;
  }
}
