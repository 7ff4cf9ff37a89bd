// What the gateway does behind each compute/status endpoint, for one system. SlurmExecutor runs for
// real: sbatch (as the cluster's unprivileged user, like FirecREST's SSH scheduler client) honours the
// script's #SBATCH lines; reads and cancels go to slurmrestd, whose answers are mapped to FirecREST's
// models. SimulatedExecutor keeps jobs in memory for the 1,000-job benchmark.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import got from 'got';
import type * as T from '../../../backends/slurm/firecrest-types.js';
import { decodeWaitStatus } from '../../../backends/slurm/states.js';

const run = promisify(execFile);

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface SystemExecutor {
  readonly name: string;
  listJobs(user: string): Promise<T.JobModel[]>;
  getJob(id: string): Promise<T.JobModel | undefined>;
  metadata(id: string): Promise<T.JobMetadataModel | undefined>;
  submit(job: T.JobDescriptionModel): Promise<string>;
  /** false when there is no such job. */
  cancel(id: string): Promise<boolean>;
  nodes(): Promise<T.NodeModel[]>;
  partitions(): Promise<T.PartitionModel[]>;
  reservations(): Promise<T.ReservationModel[]>;
  userinfo(user: string): Promise<T.UserInfoResponse>;
  /** Jobs submitted through this gateway (tests count them). */
  submitted: number;
}

export interface SlurmSystem {
  name: string;
  slurmConf: string;
  restSocket: string;
  /** Local account the service account's jobs run as (slurmrestd's user). */
  restUser: string;
}

interface V38Job {
  job_id: number;
  name: string;
  job_state: string;
  state_reason?: string;
  state_description?: string;
  exit_code?: number | null;
  account?: string;
  node_count?: number;
  cluster?: string;
  group_name?: string;
  nodes?: string;
  partition?: string;
  priority?: number;
  user_name?: string;
  current_working_directory?: string;
  start_time?: number;
  end_time?: number;
  time_limit?: number | null;
  suspend_time?: number;
  standard_output?: string;
  standard_error?: string;
  standard_input?: string;
}

const NODE_STATES = new Set(['IDLE', 'ALLOCATED', 'MIXED', 'DOWN', 'DRAIN', 'OFFLINE', 'RESERVED', 'COMPLETING', 'BUSY', 'POWERING_DOWN', 'POWERING_UP', 'UNKNOWN']);

export class SlurmExecutor implements SystemExecutor {
  submitted = 0;
  private ids: { uid: string; gid: string } | undefined;
  private readonly scripts = new Map<string, string>();
  constructor(readonly sys: SlurmSystem) {}

  get name() {
    return this.sys.name;
  }

  private async rest<R>(method: 'GET' | 'DELETE', path: string): Promise<{ status: number; body: R }> {
    const res = await got(`http://unix:${this.sys.restSocket}:/slurm/v0.0.38${path}`, { method, enableUnixSockets: true, throwHttpErrors: false, retry: { limit: 0 }, responseType: 'json' });
    return { status: res.statusCode, body: res.body as R };
  }

  private toModel(j: V38Job): T.JobModel {
    const { exitCode, signal } = decodeWaitStatus(j.exit_code);
    const now = Math.floor(Date.now() / 1000);
    return {
      jobId: String(j.job_id),
      name: j.name,
      status: { state: j.job_state, stateReason: j.state_description || j.state_reason || null, exitCode: exitCode ?? null, interruptSignal: signal ?? null },
      time: { start: j.start_time || null, end: j.end_time || null, limit: typeof j.time_limit === 'number' ? j.time_limit * 60 : null, suspended: j.suspend_time || 0, elapsed: j.start_time ? Math.max(0, (j.end_time || now) - j.start_time) : 0 },
      account: j.account || null,
      allocationNodes: j.node_count ?? 0,
      cluster: j.cluster ?? this.sys.name,
      group: j.group_name ?? null,
      nodes: j.nodes ?? '',
      partition: j.partition ?? '',
      priority: j.priority ?? null,
      killRequestUser: null,
      user: j.user_name ?? null,
      workingDirectory: j.current_working_directory ?? '',
    };
  }

  private async raw(id?: string): Promise<V38Job[] | undefined> {
    const res = await this.rest<{ jobs?: V38Job[]; errors?: { error_number?: number }[] }>('GET', id ? `/job/${encodeURIComponent(id)}` : '/jobs');
    if (res.body?.errors?.some((e) => e.error_number === 2017)) return undefined;
    if (res.status !== 200) throw new HttpError(502, `slurmrestd answered ${res.status}`);
    return res.body.jobs ?? [];
  }

  async listJobs(user: string): Promise<T.JobModel[]> {
    const local = this.localUser(user);
    return ((await this.raw()) ?? []).filter((j) => j.user_name === local).map((j) => this.toModel(j));
  }

  async getJob(id: string) {
    if (!/^\d+$/.test(id)) return undefined;
    const j = (await this.raw(id))?.[0];
    return j && this.toModel(j);
  }

  async metadata(id: string): Promise<T.JobMetadataModel | undefined> {
    if (!/^\d+$/.test(id)) return undefined;
    const j = (await this.raw(id))?.[0];
    if (!j) return undefined;
    return { jobId: id, script: this.scripts.get(id) ?? null, standardOutput: j.standard_output || null, standardError: j.standard_error || null, standardInput: j.standard_input || null };
  }

  /** The service account maps to the cluster's REST user (one local account, as with FirecREST's service accounts). */
  private localUser(_user: string): string {
    return this.sys.restUser;
  }

  private async idsOf(): Promise<{ uid: string; gid: string }> {
    this.ids ??= { uid: (await run('id', ['-u', this.sys.restUser])).stdout.trim(), gid: (await run('id', ['-g', this.sys.restUser])).stdout.trim() };
    return this.ids;
  }

  async submit(job: T.JobDescriptionModel): Promise<string> {
    const { uid, gid } = await this.idsOf();
    // Every field is its own argv entry: nothing here passes through a shell.
    const args = ['--reuid', uid, '--regid', gid, '--clear-groups', 'sbatch', '--parsable', `--chdir=${job.workingDirectory}`];
    if (job.name) args.push(`--job-name=${job.name}`);
    if (job.standardOutput) args.push(`--output=${job.standardOutput}`);
    if (job.standardError) args.push(`--error=${job.standardError}`);
    if (job.standardInput) args.push(`--input=${job.standardInput}`);
    if (job.partition) args.push(`--partition=${job.partition}`);
    if (job.account) args.push(`--account=${job.account}`);
    if (job.reservation) args.push(`--reservation=${job.reservation}`);
    if (job.constraints) args.push(`--constraint=${job.constraints}`);
    if (job.scriptPath) args.push(job.scriptPath);
    const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', SLURM_CONF: this.sys.slurmConf };
    const extra = Array.isArray(job.env) ? Object.fromEntries(job.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) : (job.env ?? {});
    Object.assign(env, extra);
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('setpriv', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (err += d));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c ?? 1, stdout: out, stderr: err }));
      child.stdin.end(job.scriptPath ? '' : (job.script ?? ''));
    });
    if (code !== 0) {
      const msg = stderr.trim().split('\n').pop() ?? 'sbatch failed';
      throw new HttpError(/QOS|association|AssocMax|policy|limit/i.test(msg) ? 403 : 400, msg);
    }
    const id = stdout.trim().split(';')[0]!;
    this.submitted++;
    if (job.script) this.scripts.set(id, job.script);
    return id;
  }

  async cancel(id: string): Promise<boolean> {
    if (!/^\d+$/.test(id)) return false;
    const res = await this.rest<{ errors?: { error_number?: number }[] }>('DELETE', `/job/${id}`);
    if (res.body?.errors?.some((e) => e.error_number === 2017)) return false;
    if (res.status !== 200) throw new HttpError(502, `slurmrestd answered ${res.status}`);
    return true;
  }

  async nodes(): Promise<T.NodeModel[]> {
    const res = await this.rest<{ nodes: { name: string; cpus: number; state: string; state_flags?: string[]; partitions?: string[]; hostname?: string; address?: string; alloc_cpus?: number; idle_cpus?: number; sockets?: number; cores?: number; threads?: number; features?: string; free_memory?: number; alloc_memory?: number; weight?: number }[] }>('GET', '/nodes');
    return res.body.nodes.map((n) => ({
      name: n.name,
      cpus: n.cpus,
      state: [n.state, ...(n.state_flags ?? [])].map((s) => s.toUpperCase()).filter((s) => NODE_STATES.has(s)),
      partitions: n.partitions ?? [],
      hostname: n.hostname ?? null,
      address: n.address ?? null,
      allocCpus: n.alloc_cpus ?? null,
      idleCpus: n.idle_cpus ?? null,
      sockets: n.sockets ?? null,
      cores: n.cores ?? null,
      threads: n.threads ?? null,
      features: n.features ?? null,
      freeMemory: n.free_memory ?? null,
      allocMemory: n.alloc_memory ?? null,
      weight: n.weight ?? null,
    }));
  }

  async partitions(): Promise<T.PartitionModel[]> {
    const res = await this.rest<{ partitions: { name: string; total_cpus?: number; total_nodes?: number; flags?: string[] }[] }>('GET', '/partitions');
    return res.body.partitions.map((p) => ({ name: p.name, partition: p.flags ?? [], cpus: p.total_cpus ?? null, totalNodes: p.total_nodes ?? null }));
  }

  async reservations(): Promise<T.ReservationModel[]> {
    const res = await this.rest<{ reservations: { name: string; node_list: string; start_time: number; end_time: number; features?: string }[] }>('GET', '/reservations');
    return (res.body.reservations ?? []).map((r) => ({ name: r.name, nodeList: r.node_list, startTime: r.start_time, endTime: r.end_time, features: r.features || null, state: null }));
  }

  async userinfo(_user: string): Promise<T.UserInfoResponse> {
    const { uid, gid } = await this.idsOf();
    const group = (await run('id', ['-gn', this.sys.restUser])).stdout.trim();
    return { user: { id: uid, name: this.sys.restUser }, group: { id: gid, name: group }, groups: [{ id: gid, name: group }], accounts: [] };
  }
}

/** In-memory jobs for the benchmark: each runs `durationMs` after submission, then completes. */
export class SimulatedExecutor implements SystemExecutor {
  submitted = 0;
  private readonly jobs = new Map<string, { name: string; submitted: number; cancelled?: number }>();
  private next = 1;
  constructor(
    readonly name: string,
    private readonly durationMs: number,
    private readonly pendingMs = 1000,
  ) {}

  private model(id: string): T.JobModel | undefined {
    const j = this.jobs.get(id);
    if (!j) return undefined;
    const age = Date.now() - j.submitted;
    const state = j.cancelled ? 'CANCELLED' : age < this.pendingMs ? 'PENDING' : age < this.pendingMs + this.durationMs ? 'RUNNING' : 'COMPLETED';
    return {
      jobId: id,
      name: j.name,
      status: { state, stateReason: null, exitCode: state === 'COMPLETED' ? 0 : null, interruptSignal: null },
      time: { start: Math.floor((j.submitted + this.pendingMs) / 1000), end: null, limit: 3600, suspended: 0, elapsed: Math.floor(age / 1000) },
      account: null,
      allocationNodes: 1,
      cluster: this.name,
      group: 'sim',
      nodes: 'sim-n1',
      partition: 'debug',
      priority: 1,
      killRequestUser: null,
      user: 'sim',
      workingDirectory: '/tmp',
    };
  }

  async listJobs() {
    return [...this.jobs.keys()].map((id) => this.model(id)!);
  }
  async getJob(id: string) {
    return this.model(id);
  }
  async metadata(id: string) {
    return this.jobs.has(id) ? { jobId: id } : undefined;
  }
  async submit(job: T.JobDescriptionModel) {
    const id = String(this.next++);
    this.jobs.set(id, { name: job.name ?? '', submitted: Date.now() });
    this.submitted++;
    return id;
  }
  async cancel(id: string) {
    const j = this.jobs.get(id);
    if (!j) return false;
    j.cancelled ??= Date.now();
    return true;
  }
  async nodes() {
    return [{ name: 'sim-n1', cpus: 1024, state: ['MIXED'] }];
  }
  async partitions() {
    return [{ name: 'debug', partition: ['UP'], cpus: 1024, totalNodes: 1 }];
  }
  async reservations() {
    return [];
  }
  async userinfo() {
    return { user: { id: '1000', name: 'sim' }, group: { id: '1000', name: 'sim' }, groups: [{ id: '1000', name: 'sim' }], accounts: [] };
  }
}
