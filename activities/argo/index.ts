// I/O of the Argo interpreter: pods (container / script / Slurm plugin templates), HTTP templates
// and Kubernetes resources. Pods run on an ExecutionTarget; the local target runs the command on
// this host through LocalJobBackend (detached, deterministic job names, state in files).
//
// The local rule (there is no container runtime here): `image` is ignored; the program is
// `command` (+ `args`), or `script.command` + the script file. The command's first word must exist
// on this host (PATH or absolute path); `python` falls back to `python3`. A container without
// `command` relies on its image's entrypoint, which cannot be known without the image, so it is
// not runnable locally (RuntimeUnavailable). Relative output paths are relative to the job's
// directory, which stands in for the image's working directory; an absolute output path is looked
// up there first (a program that wrote `result.txt` in `/` of its image) and on the host otherwise.
import { Context, CancelledFailure, type ApplicationFailure } from '@temporalio/activity';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { LocalJobBackend, readTail } from '../../backends/local-jobs.js';
import type { HttpInput, HttpResult, NodeOutputs, ResourceInput, ResourceResult, RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import { conditionHolds, jqPath, kubectlJsonPath, type ArgoKubernetes, type KObject } from './resource.js';
import { localArgv } from '../../argo/local-command.js';
import { failure } from '../../contract/failures.js';

/** Where a pod runs. Slurm and Kubernetes targets are provided by their backends when configured. */
export interface ExecutionTarget {
  readonly name: RunPodInput['target'];
  run(input: RunPodInput, ctx: { heartbeat(details?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult>;
}

export interface ArgoActivityConfig {
  home: string;
  /** Extra targets (slurm, kubernetes) keyed by name. */
  targets?: Partial<Record<RunPodInput['target'], ExecutionTarget>>;
  /** Performs `resource` templates' actions (and reads semaphore ConfigMaps) when a cluster is configured. */
  kubernetes?: ArgoKubernetes;
  /**
   * Local ConfigMap store for semaphore limits: <dir>/<configMap>/<key> files; <home>/argo/configmaps
   * by default. With `kubernetes` configured the ConfigMap is read from the cluster instead.
   */
  configMapsDir?: string;
  /** Local secret store: <dir>/<secret>/<key> files (Kubernetes Secrets stand-in). */
  secretsDir?: string;
  pollInitialMs?: number;
  pollMaxMs?: number;
  /** memoize caches: <memoDir>/<cache name>/<sha256 of key>.json; <home>/argo/memo by default. */
  memoDir?: string;
  /** What a Slurm step does when no Slurm target is configured: run on this host (default) or fail. */
  slurmFallback?: 'local' | 'fail';
}

/** The job a `plugin: {slurm: {...}}` template asks for: explicit fields win over #SBATCH lines. */
export interface SlurmJobSpec {
  script: string;
  jobName?: string;
  nodes: number;
  tasksPerNode: number;
  cpusPerTask: number;
  gpusPerNode: number;
  memoryMB?: number;
  walltime?: string;
  partition?: string;
  account?: string;
  constraint?: string;
  reservation?: string;
  qos?: string;
  env: Record<string, string>;
}

const SBATCH_FLAGS: Record<string, keyof SlurmJobSpec> = {
  '-N': 'nodes', '--nodes': 'nodes', '--ntasks-per-node': 'tasksPerNode', '-c': 'cpusPerTask', '--cpus-per-task': 'cpusPerTask',
  '--gpus-per-node': 'gpusPerNode', '--mem': 'memoryMB', '-t': 'walltime', '--time': 'walltime', '-p': 'partition', '--partition': 'partition',
  '-A': 'account', '--account': 'account', '-C': 'constraint', '--constraint': 'constraint', '--reservation': 'reservation', '--qos': 'qos', '-q': 'qos', '-J': 'jobName', '--job-name': 'jobName',
};

function memoryMB(v: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)B?$/i.exec(v.trim());
  if (!m) return undefined;
  const f = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024, '': 1 }[m[2]!.toUpperCase() as 'K'];
  return Math.ceil(Number(m[1]) * f);
}

/** Reads a Slurm plugin template's resources: its fields, then the script's #SBATCH directives. */
export function slurmJobSpec(slurm: Record<string, unknown>): SlurmJobSpec {
  const script = String(slurm.script ?? '');
  const fromScript: Record<string, string> = {};
  for (const line of script.split('\n')) {
    const m = /^#SBATCH\s+(--?[A-Za-z-]+)(?:[=\s]+(\S+))?/.exec(line.trim());
    const key = m && SBATCH_FLAGS[m[1]!];
    if (key && m[2] !== undefined && !(key in fromScript)) fromScript[key] = m[2];
  }
  const pick = (k: keyof SlurmJobSpec): string | undefined => (slurm[k] !== undefined && slurm[k] !== '' ? String(slurm[k]) : fromScript[k]);
  const int = (k: keyof SlurmJobSpec, d: number) => {
    const v = pick(k);
    const n = v === undefined ? d : Number(v);
    if (!Number.isInteger(n) || n < 0) throw failure('InvalidRequest', `plugin.slurm.${k}: ${JSON.stringify(v)} is not a whole number`);
    return n;
  };
  const mem = pick('memoryMB') ?? (slurm.memory !== undefined ? String(slurm.memory) : undefined);
  return {
    script,
    jobName: pick('jobName'),
    nodes: int('nodes', 1),
    tasksPerNode: int('tasksPerNode', 1),
    cpusPerTask: int('cpusPerTask', 1),
    gpusPerNode: int('gpusPerNode', 0),
    memoryMB: mem === undefined ? undefined : /^\d+$/.test(mem) ? Number(mem) : memoryMB(mem),
    walltime: pick('walltime'),
    partition: pick('partition'),
    account: pick('account'),
    constraint: pick('constraint'),
    reservation: pick('reservation'),
    qos: pick('qos'),
    env: Object.fromEntries(Object.entries((slurm.env ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
  };
}

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

function unavailable(message: string): ApplicationFailure {
  return failure('RuntimeUnavailable', message);
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
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
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


export function createArgoActivities(config: ArgoActivityConfig) {
  const local = new LocalTarget(new LocalJobBackend(config.home), config);
  const memoFile = (cache: string, key: string) => {
    if (!/^[A-Za-z0-9._-]+$/.test(cache)) throw failure('InvalidRequest', `memoize.cache.configMap.name ${JSON.stringify(cache)} is not a valid name`);
    return join(config.memoDir ?? join(config.home, 'argo', 'memo'), cache, `${createHash('sha256').update(key).digest('hex')}.json`);
  };
  const targets: Partial<Record<RunPodInput['target'], ExecutionTarget>> = { local, ...config.targets };
  return {
    async argoRunPod(input: RunPodInput): Promise<RunPodResult> {
      let target = targets[input.target];
      let note: string | undefined;
      if (!target && input.target === 'slurm' && (input.slurmFallback ?? config.slurmFallback ?? 'local') === 'local') {
        // The fallback rule (see the top of this file): a Slurm step runs here when no Slurm target is configured.
        const job = input.slurm ? slurmJobSpec(input.slurm) : undefined;
        target = local;
        note = `slurm: no Slurm target on this worker; ran locally${job ? ` (${job.nodes} node${job.nodes === 1 ? '' : 's'} requested)` : ''}`;
      }
      if (!target) throw unavailable(`no ${input.target} execution target is configured on this worker (template ${input.templateName})`);
      const ctx = Context.current();
      const r = await target.run(input, { heartbeat: (d) => ctx.heartbeat(d), sleep: (ms) => ctx.sleep(ms) });
      return note ? { ...r, message: r.message ? `${note}: ${r.message}` : note } : r;
    },

    /** memoize: the entry for `key` in `cache` when it is younger than maxAgeMs (Argo's ConfigMap cache, as files). */
    async argoMemoGet(input: { cache: string; key: string; maxAgeMs?: number }): Promise<{ outputs?: NodeOutputs; nodeId?: string; createdAt?: string }> {
      const file = memoFile(input.cache, input.key);
      if (!existsSync(file)) return {};
      const e = JSON.parse(readFileSync(file, 'utf8')) as { key: string; nodeID: string; outputs: NodeOutputs; creationTimestamp: string };
      if (e.key !== input.key) return {};
      if (input.maxAgeMs !== undefined && Date.now() - Date.parse(e.creationTimestamp) > input.maxAgeMs) return {};
      return { outputs: e.outputs, nodeId: e.nodeID, createdAt: e.creationTimestamp };
    },

    async argoMemoPut(input: { cache: string; key: string; nodeId: string; outputs: NodeOutputs }): Promise<void> {
      const file = memoFile(input.cache, input.key);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify({ key: input.key, nodeID: input.nodeId, outputs: input.outputs, creationTimestamp: new Date().toISOString() }));
      renameSync(`${file}.tmp`, file);
    },

    async argoHttp(input: HttpInput): Promise<HttpResult> {
      const res = await fetch(input.url, { method: input.method, headers: input.headers, body: input.body, signal: AbortSignal.timeout(input.timeoutMs ?? 30_000) });
      return { statusCode: res.status, body: await res.text(), headers: Object.fromEntries(res.headers.entries()) };
    },

    /** A semaphore's limit: the integer in its ConfigMap key (Argo re-reads it on every acquire). */
    async argoSyncLimit(input: { namespace: string; configMap: string; key: string }): Promise<number> {
      const where = `ConfigMap ${input.namespace}/${input.configMap} key ${input.key}`;
      let text: string | undefined;
      if (config.kubernetes?.configMapValue) text = await config.kubernetes.configMapValue(input.namespace, input.configMap, input.key);
      else {
        if (![input.configMap, input.key].every((p) => /^[A-Za-z0-9._-]+$/.test(p) && p !== '.' && p !== '..')) throw failure('InvalidRequest', `${where}: not a valid name`);
        const file = join(config.configMapsDir ?? join(config.home, 'argo', 'configmaps'), input.configMap, input.key);
        if (existsSync(file)) text = readFileSync(file, 'utf8');
      }
      if (text === undefined) throw failure('InvalidRequest', `semaphore limit: ${where} does not exist`);
      const n = Number(text.trim());
      if (!Number.isInteger(n) || n < 0) throw failure('InvalidRequest', `semaphore limit: ${where} is ${JSON.stringify(text.trim())}, not a whole number`);
      return n;
    },

    /**
     * A `resource` template: the action on the manifest, then (with success/failureCondition) the
     * object is watched by polling until one holds; output parameters come from the final object.
     */
    async argoResource(input: ResourceInput): Promise<ResourceResult> {
      const k8s = config.kubernetes;
      if (!k8s) throw unavailable('resource templates need a Kubernetes backend, and none is configured on this worker');
      const ctx = Context.current();
      let obj: KObject | undefined;
      try {
        obj = await k8s.apply(input.manifest, input.action, { namespace: input.namespace, mergeStrategy: input.mergeStrategy, flags: input.flags });
      } catch (e) {
        const err = e as Error & { code?: number; transient?: boolean };
        // API refusals (invalid object, already exists, forbidden…) are the template's failure; an
        // unreachable or overloaded API server is retried by the activity's policy.
        if (err.transient) throw e;
        return { phase: 'Failed', message: err.message, parameters: {} };
      }
      const meta = (obj?.metadata ?? {}) as { name?: string; namespace?: string };
      const ref = obj ? { apiVersion: String(obj.apiVersion), kind: String(obj.kind), namespace: meta.namespace, name: String(meta.name) } : undefined;
      if (ref && (input.successCondition || input.failureCondition) && input.action !== 'delete') {
        let delay = config.pollInitialMs ?? 50;
        for (;;) {
          if (input.failureCondition && conditionHolds(obj!, input.failureCondition)) {
            return { phase: 'Failed', message: `failure condition '${input.failureCondition}' met for ${ref.kind} ${ref.name}`, parameters: outputsOf(obj!), resourceName: `${ref.kind.toLowerCase()}/${ref.name}` };
          }
          if (!input.successCondition || conditionHolds(obj!, input.successCondition)) break;
          ctx.heartbeat({ waiting: `${ref.kind}/${ref.name}` });
          await ctx.sleep(delay);
          delay = Math.min(delay * 2, config.pollMaxMs ?? 1000);
          const next = await k8s.get(ref);
          if (!next) return { phase: 'Failed', message: `${ref.kind} ${ref.name} was deleted before its success condition held`, parameters: {} };
          obj = next;
        }
      }
      return { phase: 'Succeeded', parameters: obj ? outputsOf(obj) : {}, resourceName: ref ? `${ref.kind.toLowerCase()}/${ref.name}` : undefined };

      function outputsOf(o: KObject): Record<string, string> {
        const out: Record<string, string> = {};
        for (const p of input.outputParameters ?? []) {
          try {
            if (p.jsonPath !== undefined) out[p.name] = kubectlJsonPath(o, p.jsonPath);
            else if (p.jqFilter !== undefined) out[p.name] = jqPath(o, p.jqFilter);
          } catch (e) {
            if (p.default === undefined) throw failure('InvalidRequest', `output parameter ${p.name}: ${(e as Error).message}`);
          }
          if (out[p.name] === undefined && p.default !== undefined) out[p.name] = p.default;
        }
        return out;
      }
    },
  };
}
