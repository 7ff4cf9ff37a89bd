// The embedded local runtime: jobs are detached process groups whose whole state lives in files under
// <home>/jobs/<name>/, so a worker that crashes and restarts re-attaches by job id instead of
// starting a second copy.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRef, JobStatus, JobProgress } from '../contract/outcome.js';
import type { JobBackend, JobRequest } from './types.js';
import { isAlive, killGroup, processStartTime } from './proc.js';
import { failure } from '../contract/failures.js';
import { parseJsonLimited } from '../contract/limits.js';
import { jobEnv, unspawnable } from './job-env.js';
import { probeSandbox } from '../activities/argo/sandbox.js';
import { readWorkloadFile, sandboxedCommand } from './local-sandbox.js';
import { findExecutable } from '../argo/local-command.js';
import type { LocalIsolationMode } from '../config/worker.js';

/**
 * How a local job is isolated. `sandbox`: in its own bubblewrap sandbox (activities/argo/sandbox.ts):
 * the system allowlist and the Tandem installation read-only, its `JobRequest.sandbox.writable`
 * directories (its run's data and checkpoints) and a scratch working directory writable, its own /tmp,
 * /proc and network (host network only with `sandbox.network: 'host'`); TANDEM_HOME is never in it.
 * `none`: a plain process (the caller sandboxes it itself, as the Argo local target does, or a test
 * drives the backend directly).
 */
export interface LocalJobOptions {
  isolation?: 'sandbox' | 'none';
}

/**
 * The isolation a worker gives its local pipeline jobs (TANDEM_LOCAL_ISOLATION). `auto` sandboxes where
 * bubblewrap works; where it does not (not installed, no user namespaces: a container's default seccomp
 * profile), jobs run as plain processes and `warning` says so once, loudly — except with a tenant
 * policy, where tenants must not read each other's files: then the sandbox stays, and each job fails
 * saying what is missing. `sandbox` always sandboxes; `none` never (a single-user machine, by choice).
 */
export function chooseIsolation(mode: LocalIsolationMode, multiTenant: boolean, probe: () => { bwrap: string } | { error: string } = () => probeSandbox(findExecutable('bwrap'))): { isolation: 'sandbox' | 'none'; warning?: string } {
  if (mode !== 'auto') return { isolation: mode };
  const p = probe();
  if (!('error' in p) || multiTenant) return { isolation: 'sandbox' };
  return {
    isolation: 'none',
    warning:
      `tandem: local pipeline jobs run WITHOUT a sandbox on this worker (they can read whatever its user can): ${p.error.replace(/^Tandem runs every local Argo pod and local pipeline job in a bubblewrap sandbox, and /, '')}. ` +
      'Install bubblewrap to isolate them, or set TANDEM_LOCAL_ISOLATION=sandbox to refuse to run them unsandboxed (=none silences this).',
  };
}

/** The largest progress file read (a job writes it; the worker parses it on every poll). */
const MAX_PROGRESS_BYTES = 64 * 1024;

interface JobRecord {
  jobId: string;
  name: string;
  pid: number;
  startTime?: number;
  submittedAt: string;
  walltimeMs: number;
  command: string[];
}

// The supervisor shell records the exit code atomically after the program ends; "$@" keeps every
// argument a single word, so no part of the command is ever re-parsed by the shell.
const SUPERVISOR = '"$@" >stdout 2>stderr; echo $? > exit.tmp && mv exit.tmp exit';
const CANCEL_GRACE_MS = 5000;

function writeJson(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value, null, 2));
  renameSync(`${path}.tmp`, path);
}

export function readTail(path: string, bytes = 2048): string {
  if (!existsSync(path)) return '';
  const size = statSync(path).size;
  const fd = openSync(path, 'r');
  try {
    const len = Math.min(bytes, size);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export class LocalJobBackend implements JobBackend {
  readonly runtime = 'local' as const;
  private readonly root: string;

  constructor(
    private readonly home: string,
    private readonly now: () => number = Date.now,
    private readonly options: LocalJobOptions = {},
  ) {
    this.root = join(home, 'jobs');
    mkdirSync(this.root, { recursive: true });
  }

  /**
   * The command that runs `req` in its sandbox: bwrap … -- <command>. The job's scratch directory
   * (<job>/work, its working directory and progress file) is the one part of its job directory it may
   * write: job.json and the exit file stay out of its reach.
   */
  private sandboxed(req: JobRequest, dir: string): { command: string[]; work: string } {
    return sandboxedCommand(req.command, { what: `job ${req.name}`, dir, home: this.home, writable: req.sandbox?.writable, network: req.sandbox?.network });
  }

  jobDir(jobId: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(jobId)) throw new Error(`invalid local job id ${JSON.stringify(jobId)}`);
    return join(this.root, jobId);
  }

  private record(jobId: string): JobRecord | undefined {
    const file = join(this.jobDir(jobId), 'job.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as JobRecord) : undefined;
  }

  private ref(rec: JobRecord, adopted: boolean): JobRef {
    return { runtime: 'local', jobId: rec.jobId, name: rec.name, site: 'local', adopted };
  }

  async findByName(name: string): Promise<JobRef | undefined> {
    const rec = this.record(name);
    return rec ? this.ref(rec, true) : undefined;
  }

  async submit(req: JobRequest): Promise<JobRef> {
    const existing = await this.findByName(req.name);
    if (existing) return existing;
    const bad = unspawnable(req.command, req.env);
    if (bad) throw failure('InvalidRequest', `job ${req.name}: ${bad} contains a NUL byte or is not a valid variable, which no process can receive`);
    const dir = this.jobDir(req.name);
    // mkdir without `recursive` fails if a concurrent submit won the race: then adopt its job.
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        for (let i = 0; i < 50 && !this.record(req.name); i++) await new Promise((r) => setTimeout(r, 20));
        const rec = this.record(req.name);
        if (rec) return this.ref(rec, true);
      }
      throw e;
    }
    let command = req.command;
    let progress = join(dir, 'progress.json');
    let extra: Record<string, string> = {};
    if (this.options.isolation === 'sandbox') {
      const s = this.sandboxed(req, dir);
      command = s.command;
      progress = join(s.work, 'progress.json');
      extra = { TMPDIR: '/tmp' };
    }
    const child = spawn('/bin/sh', ['-c', SUPERVISOR, 'tandem-job', ...command], {
      cwd: dir,
      detached: true,
      stdio: 'ignore',
      // Never the worker's own environment (its secrets would reach the job's output): backends/job-env.ts.
      env: jobEnv(req.env, { TANDEM_JOB_ID: req.name, TANDEM_PROGRESS_FILE: progress }, extra),
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${req.command[0]}`);
    const rec: JobRecord = {
      jobId: req.name,
      name: req.name,
      pid: child.pid,
      startTime: processStartTime(child.pid)?.start,
      submittedAt: new Date(this.now()).toISOString(),
      walltimeMs: req.walltimeMs,
      command: req.command,
    };
    writeJson(join(dir, 'job.json'), rec);
    return this.ref(rec, false);
  }

  async status(jobId: string): Promise<JobStatus> {
    const rec = this.record(jobId);
    const dir = this.jobDir(jobId);
    if (!rec) return { jobId, state: 'LOST', reason: 'no such local job' };
    const progress = this.progress(dir);
    const tail = () => (readTail(join(dir, 'stderr')) || readTail(join(dir, 'stdout'))).trim().split('\n').slice(-15).join('\n');
    const marker = existsSync(join(dir, 'stop-reason')) ? readFileSync(join(dir, 'stop-reason'), 'utf8').trim() : undefined;
    if (existsSync(join(dir, 'exit'))) {
      const exitCode = Number(readFileSync(join(dir, 'exit'), 'utf8').trim());
      if (exitCode === 0) return { jobId, state: 'COMPLETED', exitCode, progress };
      if (marker === 'timeout') return { jobId, state: 'TIMEOUT', exitCode, reason: 'walltime exceeded', tail: tail(), progress };
      if (marker === 'cancelled') return { jobId, state: 'CANCELLED', exitCode, progress };
      return { jobId, state: 'FAILED', exitCode, reason: `exit code ${exitCode}`, tail: tail(), progress };
    }
    if (isAlive(rec.pid, rec.startTime)) {
      if (this.now() - Date.parse(rec.submittedAt) > rec.walltimeMs && marker === undefined) {
        await this.stop(jobId, 'timeout');
      }
      return { jobId, state: 'RUNNING', progress };
    }
    // The supervisor records the exit code and then exits: read between the two checks above, a job
    // that just ended looks dead without an exit file. Look again before calling it lost.
    if (existsSync(join(dir, 'exit'))) return this.status(jobId);
    if (marker === 'timeout') return { jobId, state: 'TIMEOUT', reason: 'walltime exceeded', tail: tail(), progress };
    if (marker === 'cancelled') return { jobId, state: 'CANCELLED', progress };
    // The supervisor died without recording an exit code: the "node" went away under the job.
    return { jobId, state: 'LOST', reason: 'the job process group vanished without an exit status', tail: tail(), progress };
  }

  private progress(dir: string): JobProgress | undefined {
    try {
      // A sandboxed job writes it in its scratch directory; a plain one beside its job record.
      // Written by the job: no symlink, FIFO (which would block the worker) or oversized file is read.
      const text = [join(dir, 'work', 'progress.json'), join(dir, 'progress.json')].map((f) => readWorkloadFile(f, MAX_PROGRESS_BYTES)).find((t) => t !== undefined);
      return text === undefined ? undefined : (parseJsonLimited(text) as JobProgress);
    } catch {
      return undefined; // absent, or caught mid-write: the next poll sees it
    }
  }

  private async stop(jobId: string, reason: 'cancelled' | 'timeout'): Promise<void> {
    const rec = this.record(jobId);
    if (!rec) return;
    const dir = this.jobDir(jobId);
    if (existsSync(join(dir, 'exit')) || !isAlive(rec.pid, rec.startTime)) return;
    writeFileSync(join(dir, 'stop-reason'), reason);
    killGroup(rec.pid, 'SIGTERM');
    const deadline = Date.now() + CANCEL_GRACE_MS;
    while (isAlive(rec.pid, rec.startTime) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (isAlive(rec.pid, rec.startTime)) killGroup(rec.pid, 'SIGKILL');
  }

  async cancel(jobId: string): Promise<void> {
    await this.stop(jobId, 'cancelled');
  }

  /** The pid of a job's process group leader (tests use it to simulate a node crash). */
  pid(jobId: string): number | undefined {
    return this.record(jobId)?.pid;
  }
}
