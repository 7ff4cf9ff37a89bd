// The local execution target: an Argo pod (container / script / Slurm plugin template) runs as a
// command on this host through LocalJobBackend (detached, deterministic job names, state in files).
//
// The local rule (there is no container runtime here): `image` is ignored; the program is
// `command` (+ `args`), or `script.command` + the script file. The command's first word must exist
// on this host (PATH or absolute path); `python` falls back to `python3`. A container without
// `command` relies on its image's entrypoint, which cannot be known without the image, so it is
// not runnable locally (RuntimeUnavailable). Relative output paths are relative to the job's
// directory, which stands in for the image's working directory; an absolute output path is looked
// up there first (a program that wrote `result.txt` in `/` of its image) and on the host otherwise.
import { CancelledFailure, type ApplicationFailure } from '@temporalio/activity';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { LocalJobBackend, readTail } from '../../backends/local-jobs.js';
import { jobBaseEnv } from '../../backends/job-env.js';
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import { localArgv } from '../../argo/local-command.js';
import { failure } from '../../contract/failures.js';
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
    const scriptFile = join(this.cfg.home, 'argo', 'scripts', `${input.jobName}.script`);
    const job = input.slurm ? slurmJobSpec(input.slurm) : undefined;
    if (input.kind === 'plugin' && job) input = { ...input, source: job.script };
    const { argv, reason } = localArgv(input, scriptFile);
    if (!argv) throw unavailable(reason!);
    const env = { ...input.env, ...(job ? this.slurmEnv(input, job, dir) : {}), ...this.secretEnv(input) };
    const existing = await this.backend.findByName(input.jobName);
    if (!existing) {
      if (input.source !== undefined) {
        mkdirSync(dirname(scriptFile), { recursive: true });
        // Executable, as Argo's staged script is: `command: [sh, -c]` runs the file by its path.
        writeFileSync(scriptFile, input.source, { mode: 0o755 });
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
        // The job's directory stands in for the image's working directory (`/` in most images): an
        // absolute path a program wrote relative to its cwd is found there first.
        const base = (p: string) => (!isAbsolute(p) ? join(dir, p) : existsSync(join(dir, p)) ? join(dir, p) : p);
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

  /** What a one-node allocation of the requested shape would set, and the srun stand-in on PATH. */
  private slurmEnv(input: RunPodInput, job: SlurmJobSpec, dir: string): Record<string, string> {
    const bin = join(this.cfg.home, 'argo', 'bin');
    const shim = join(bin, 'srun');
    if (!existsSync(shim) || readFileSync(shim, 'utf8') !== SRUN_SHIM) {
      mkdirSync(bin, { recursive: true });
      writeFileSync(`${shim}.${process.pid}`, SRUN_SHIM, { mode: 0o755 });
      renameSync(`${shim}.${process.pid}`, shim);
    }
    return {
      ...job.env,
      PATH: `${bin}${delimiter}${jobBaseEnv().PATH ?? ''}`,
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
      SLURM_SUBMIT_DIR: dir,
      TANDEM_SLURM_FALLBACK: 'local',
    };
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
