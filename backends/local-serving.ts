// Model serving on the local runtime: one detached server process per deployment name, with its
// state in <home>/deployments/<name>/ so a restarted worker finds (and does not duplicate) it.
//
// Lifecycle (`tandem deployments … ` on the local runtime, cli/deployments.ts): a pipeline's
// deployments are its revisions, one a run, in the order they were created. When a revision passes its
// readiness gate, the newest gated revision of the pipeline serves and every other gated one is retired
// (`retireOthers`: stopped, record kept so that `rollback` can start it again). A revision still on its
// way to its gate is never retired: two runs of one pipeline deploying at once must not stop each
// other's server mid-gate (the older run's gate would wait out its timeout on a dead endpoint); a failed or cancelled run's compensation removes its own (`undeploy`);
// `stop` stops one and keeps its record; `tandem dev` stops, on exit, the ones its worker started
// (`stopOwnedBy`); test code stops what is left under a directory with `stopModelServersUnder`.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinCommand } from '../programs/commands.js';
import { groupAlive, isAlive, killGroup, processStartTime } from './proc.js';
import { failure } from '../contract/failures.js';
import { jobEnv, unspawnable } from './job-env.js';
import { DEFAULTS } from '../config/defaults.js';
import { localIsolationMode } from '../config/worker.js';
import { chooseIsolation } from './local-jobs.js';
import { parseJsonLimited } from '../contract/limits.js';
import { isLoopbackHost } from '../contract/endpoint-url.js';
import { pinCheckpoint, readWorkloadFile, sandboxedCommand } from './local-sandbox.js';

/** The isolation TANDEM_LOCAL_ISOLATION gives (auto: the sandbox where bubblewrap works), as chooseIsolation decides for workers. */
function defaultIsolation(): 'sandbox' | 'none' {
  return chooseIsolation(localIsolationMode(), false).isolation;
}

/** Where a deployment's server writes its endpoint: its work/ directory when sandboxed, else its own directory. */
export const endpointFiles = (dir: string): string[] => [join(dir, 'work', 'endpoint.json'), join(dir, 'endpoint.json')];

/** Why `url` is not an endpoint the worker may dial: not http(s), not on the host's loopback, credentials in it. */
export function loopbackProblem(url: unknown): string | undefined {
  if (typeof url !== 'string') return 'not a URL';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `scheme ${u.protocol} (only http and https)`;
  if (u.username || u.password) return 'credentials in the URL';
  if (!isLoopbackHost(u.hostname)) return `host ${u.hostname} is not the loopback (a local model server binds 127.0.0.1)`;
  return undefined;
}

export interface DeploymentRef {
  runtime: 'local' | 'kubernetes';
  name: string;
  endpoint: string;
  model: string;
  checkpoint: string;
  adopted: boolean;
}

/** What a deployment is doing: serving, retired by a newer revision (or a rollback), stopped by hand. */
export type LocalDeploymentState = 'serving' | 'retired' | 'stopped';

interface DeploymentRecord extends Omit<DeploymentRef, 'adopted' | 'endpoint'> {
  pid: number;
  startTime?: number;
  /** The pipeline, tenant and run it serves (records written before these were kept have none). */
  pipeline?: string;
  tenant?: string;
  workflowId?: string;
  /** When the deployment was created (ISO 8601). */
  created?: string;
  /** The server's command and environment, to start it again on rollback. */
  command?: string[];
  env?: Record<string, string>;
  /** The process that started the server (the worker): `tandem dev` stops what its worker started. */
  owner?: { pid: number; startTime?: number };
  state?: LocalDeploymentState;
  /** False from creation until the run's readiness gate passes (absent on older records: gated). */
  gated?: boolean;
  /** Which deployment retired it, and when it stopped. */
  retiredBy?: string;
  stopped?: string;
  /** Runs in its sandbox (backends/local-sandbox.ts): its endpoint file is in its work/ directory. */
  sandboxed?: boolean;
}

/** How a worker isolates its model servers: as its pipeline jobs (TANDEM_LOCAL_ISOLATION, chooseIsolation). */
export interface LocalServingOptions {
  isolation?: 'sandbox' | 'none';
}

/** One local deployment as `tandem deployments` shows it. */
export interface LocalDeploymentRow {
  runtime: 'local';
  name: string;
  pipeline?: string;
  tenant?: string;
  run?: string;
  model: string;
  checkpoint: string;
  endpoint?: string;
  /** serving (its process alive), retired, stopped, or exited (recorded serving, process gone). */
  state: LocalDeploymentState | 'exited';
  pid: number;
  alive: boolean;
  created?: string;
  stopped?: string;
  retiredBy?: string;
  /** 1, 2, … in creation order among the pipeline's deployments. */
  revision?: number;
}

export interface LocalDeployRequest {
  name: string;
  model: string;
  checkpoint: string;
  command?: string[];
  env?: Record<string, string>;
  /** How long to wait for the server to bind its port. */
  bindTimeoutMs?: number;
  /** The pipeline, tenant and run it serves (`tandem deployments`, retirement by a newer revision). */
  pipeline?: string;
  tenant?: string;
  workflowId?: string;
}

export class LocalServingBackend {
  private readonly root: string;

  constructor(
    private readonly home: string,
    private readonly options: LocalServingOptions = {},
  ) {
    this.root = join(home, 'deployments');
    mkdirSync(this.root, { recursive: true });
  }

  private dir(name: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`invalid deployment name ${JSON.stringify(name)}`);
    return join(this.root, name);
  }

  private record(name: string): DeploymentRecord | undefined {
    const f = join(this.dir(name), 'deployment.json');
    return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as DeploymentRecord) : undefined;
  }

  /**
   * The URL the server wrote, once it has bound its port. The server writes the file (and a sandboxed
   * one is tenant code), so the worker only takes an http(s) URL on the host's loopback: the readiness
   * gate dials it, and must never be pointed at another host (a metadata service, a private address).
   */
  private endpoint(name: string, strict = false): string | undefined {
    // Written by the server (tenant code when sandboxed): no symlink, FIFO or big file is followed.
    const text = endpointFiles(this.dir(name)).map((p) => readWorkloadFile(p, 4096)).find((t) => t !== undefined);
    if (text === undefined) return undefined;
    let url: unknown;
    try {
      url = (parseJsonLimited(text, 8, 4096) as { url?: unknown }).url;
    } catch {
      return undefined; // half-written: read again on the next poll
    }
    const bad = loopbackProblem(url);
    if (bad && !strict) return undefined; // listed as having none; the deploy that waited for it failed
    if (bad) throw failure('InvalidRequest', `model server for ${name} wrote endpoint ${JSON.stringify(url)}: ${bad}`);
    return url as string;
  }

  async deploy(req: LocalDeployRequest): Promise<DeploymentRef> {
    const rec = this.record(req.name);
    if (rec && isAlive(rec.pid, rec.startTime) && rec.checkpoint === req.checkpoint && rec.model === req.model) {
      const endpoint = await this.waitForEndpoint(req.name, rec.pid, rec.startTime, req.bindTimeoutMs);
      return { runtime: 'local', name: req.name, endpoint, model: rec.model, checkpoint: rec.checkpoint, adopted: true };
    }
    if (rec) await this.undeploy(req.name); // a dead or different revision: replace it
    const command = req.command ?? builtinCommand('serve');
    const bad = unspawnable(command, req.env);
    if (bad) throw failure('InvalidRequest', `deployment ${req.name}: ${bad} contains a NUL byte or is not a valid variable, which no process can receive`);
    const record: DeploymentRecord = {
      runtime: 'local',
      name: req.name,
      model: req.model,
      checkpoint: req.checkpoint,
      pid: 0,
      pipeline: req.pipeline,
      tenant: req.tenant,
      workflowId: req.workflowId,
      created: new Date().toISOString(),
      command,
      env: req.env,
      owner: { pid: process.pid, startTime: processStartTime(process.pid)?.start },
      state: 'serving',
      gated: false,
    };
    const endpoint = await this.start(record, req.bindTimeoutMs);
    return { runtime: 'local', name: req.name, endpoint, model: req.model, checkpoint: req.checkpoint, adopted: false };
  }

  /** Starts the record's server (a new deployment, or a retired one on rollback) and waits for its port. */
  private async start(record: DeploymentRecord, bindTimeoutMs?: number): Promise<string> {
    const command = record.command ?? builtinCommand('serve');
    const dir = this.dir(record.name);
    mkdirSync(dir, { recursive: true });
    for (const f of endpointFiles(dir)) rmSync(f, { force: true });
    // A new deployment takes the worker's isolation; a rollback starts it as it ran before. Without
    // either (a record older than the sandbox, or a backend built without options: the CLI's
    // `deployments rollback`), TANDEM_LOCAL_ISOLATION decides as for the workers: sandboxed where it can be.
    record.sandboxed ??= (this.options.isolation ?? defaultIsolation()) === 'sandbox';
    // Sandboxed: only the installation, its checkpoint (read-only) and its work/ directory are visible;
    // the host's network, since the readiness gate and clients reach it on 127.0.0.1.
    let run: { command: string[]; work: string; extra: Record<string, string>; fds: number[] } = { command, work: dir, extra: {}, fds: [] };
    if (record.sandboxed) {
      // A fresh root and work/ each start: a rolled-back revision's earlier server could write both
      // (bound at / and as its cwd) and plant symlinks the sandbox builder would follow.
      for (const d of ['root', 'work', 'volumes']) rmSync(join(dir, d), { recursive: true, force: true });
      // The checkpoint is opened once and bound through that descriptor: a train job swapping it for a
      // link between the check and the bind would otherwise show the server what the link points at.
      const pin = pinCheckpoint(record.checkpoint, this.home);
      if (pin.problem) throw failure('InvalidRequest', `deployment ${record.name}: checkpoint ${record.checkpoint} is not served: ${pin.problem}`);
      try {
        const s = sandboxedCommand(command, { what: `deployment ${record.name}`, dir, home: this.home, readOnlyFds: pin.pinned ? [pin.pinned] : [], network: 'host' });
        // bwrap dies with its parent (--die-with-parent), and a model server outlives the worker that
        // started it (a restarted worker adopts it; `tandem dev --keep`): a shell of its own process
        // group is that parent, as for local jobs; stopping the group stops shell, bwrap and server.
        // (`; exit $?`: bash as /bin/sh would otherwise exec the last command, and bwrap's parent be the worker.)
        run = { command: ['/bin/sh', '-c', '"$@"; exit $?', 'tandem-serve', ...s.command], work: s.work, extra: { TMPDIR: '/tmp' }, fds: s.fds };
      } catch (e) {
        if (pin.pinned) closeSync(pin.pinned.fd);
        throw e;
      }
    }
    const log = openSync(join(dir, 'server.log'), 'a');
    let child;
    try {
      child = spawn(run.command[0]!, run.command.slice(1), {
        cwd: run.work,
        detached: true,
        // The pinned checkpoint reaches bwrap as fd 3 (bwrap closes it once bound: the server never holds it).
        stdio: ['ignore', log, log, ...run.fds],
        // Never the worker's own environment (its secrets would reach server.log and the failure): backends/job-env.ts.
        env: jobEnv(record.env, { TANDEM_CHECKPOINT: record.checkpoint, TANDEM_MODEL_ID: record.model, TANDEM_ENDPOINT_FILE: join(run.work, 'endpoint.json') }, run.extra),
      });
    } finally {
      closeSync(log);
      for (const fd of run.fds) closeSync(fd);
    }
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start model server ${command[0]}`);
    Object.assign(record, { pid: child.pid, startTime: processStartTime(child.pid)?.start, state: 'serving', retiredBy: undefined, stopped: undefined });
    this.write(record);
    return this.waitForEndpoint(record.name, record.pid, record.startTime, bindTimeoutMs);
  }

  private write(record: DeploymentRecord): void {
    writeFileSync(join(this.dir(record.name), 'deployment.json'), JSON.stringify(record, null, 2), { mode: 0o600 });
  }

  /**
   * Stops the server's process group: SIGTERM, then SIGKILL after 5 s. It waits for the whole group,
   * not only its leader (a sandboxed server's is a shell): a stopped revision no longer holds its port.
   */
  private async kill(rec: DeploymentRecord): Promise<void> {
    if (!isAlive(rec.pid, rec.startTime)) return; // (its pid may belong to another process by now: never signalled)
    killGroup(rec.pid, 'SIGTERM');
    const deadline = Date.now() + 5000;
    while ((isAlive(rec.pid, rec.startTime) || groupAlive(rec.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (isAlive(rec.pid, rec.startTime) || groupAlive(rec.pid)) killGroup(rec.pid, 'SIGKILL');
  }

  /** Stops a deployment's server and keeps its record (state `stopped`, or `retired` by `by`). False if unknown. */
  async stop(name: string, by?: string): Promise<boolean> {
    const rec = this.record(name);
    if (!rec) return false;
    await this.kill(rec);
    Object.assign(rec, { state: by ? 'retired' : 'stopped', retiredBy: by, stopped: new Date().toISOString() });
    this.write(rec);
    for (const f of endpointFiles(this.dir(name))) rmSync(f, { force: true });
    return true;
  }

  /**
   * `name` passed its readiness gate: of the pipeline's gated revisions that still serve, the newest
   * keeps serving and the others are retired (stopped, kept for rollback), `name` itself included when
   * a newer revision passed its gate first. Revisions not yet gated are left alone. Returns the names
   * retired, each with the revision that retired it. A deployment without a pipeline retires nothing.
   */
  async retireOthers(name: string): Promise<{ name: string; by: string }[]> {
    const rec = this.record(name);
    if (!rec) return [];
    if (rec.gated === false) this.write({ ...rec, gated: true });
    if (!rec.pipeline) return [];
    const rows = this.rows().filter((r) => r.pipeline === rec.pipeline && r.state === 'serving' && this.record(r.name)?.gated !== false);
    const winner = rows.at(-1); // rows are oldest first
    if (!winner) return [];
    const retired: { name: string; by: string }[] = [];
    for (const r of rows) {
      if (r.name === winner.name) continue;
      await this.stop(r.name, winner.name);
      retired.push({ name: r.name, by: winner.name });
    }
    return retired;
  }

  /** Stops the serving deployments that process `pid` started (`tandem dev` on exit: its worker's). */
  async stopOwnedBy(pid: number): Promise<string[]> {
    const names = this.rows().filter((r) => r.alive && this.record(r.name)?.owner?.pid === pid).map((r) => r.name);
    for (const n of names) await this.stop(n);
    return names;
  }

  /** A pipeline's deployments (or the one named, with its pipeline's), oldest first, numbered as revisions. */
  revisions(nameOrPipeline: string): LocalDeploymentRow[] {
    const rows = this.rows();
    const named = rows.find((r) => r.name === nameOrPipeline);
    const pipeline = named ? named.pipeline : nameOrPipeline;
    if (named && !pipeline) return [named];
    return rows.filter((r) => r.pipeline === pipeline);
  }

  /**
   * Serves an earlier revision of a pipeline again: `to` (a revision number or deployment name), else
   * the one before the current (the newest serving, or with none serving the newest). Its server
   * starts; once it has bound its port the ones serving are retired. Throws when there is nothing to roll
   * back to.
   */
  async rollback(nameOrPipeline: string, to?: number | string, bindTimeoutMs?: number): Promise<{ from?: string; to: string; endpoint: string }> {
    const revs = this.revisions(nameOrPipeline);
    if (!revs.length) throw new Error(`no local deployment or pipeline named ${JSON.stringify(nameOrPipeline)}`);
    const serving = revs.filter((r) => r.state === 'serving' && r.alive);
    const current = serving.at(-1) ?? revs.at(-1)!;
    const target = to === undefined ? revs.filter((r) => r.revision! < current.revision!).at(-1) : revs.find((r) => (typeof to === 'number' ? r.revision === to : r.name === to));
    if (!target) throw new Error(to === undefined ? `${nameOrPipeline}: no revision before ${current.name} to roll back to (see \`tandem deployments show ${nameOrPipeline}\`)` : `${nameOrPipeline}: no revision ${JSON.stringify(to)} (see \`tandem deployments show ${nameOrPipeline}\`)`);
    const from = serving.at(-1)?.name;
    if (target.state === 'serving' && target.alive) return { from, to: target.name, endpoint: target.endpoint ?? '' };
    const endpoint = await this.start(this.record(target.name)!, bindTimeoutMs);
    for (const r of serving) if (r.name !== target.name) await this.stop(r.name, target.name);
    return { from, to: target.name, endpoint };
  }

  private async waitForEndpoint(name: string, pid: number, startTime: number | undefined, timeoutMs: number = DEFAULTS.localServingBindTimeoutMs): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let url: string | undefined;
      try {
        url = this.endpoint(name, true);
      } catch (e) {
        // An endpoint it may not dial: the server is stopped (its record stays, for the failure's compensation).
        const rec = this.record(name);
        if (rec) await this.kill(rec);
        throw e;
      }
      if (url) return url;
      if (!isAlive(pid, startTime)) {
        const log = existsSync(join(this.dir(name), 'server.log')) ? readFileSync(join(this.dir(name), 'server.log'), 'utf8').trim().split('\n').slice(-10).join('\n') : '';
        throw new Error(`model server for ${name} exited before binding a port${log ? `:\n${log}` : ''}`);
      }
      if (Date.now() > deadline) throw new Error(`model server for ${name} did not bind a port within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the server and removes its record. Idempotent: an unknown deployment is not an error. */
  async undeploy(name: string): Promise<boolean> {
    const rec = this.record(name);
    if (!rec) return false;
    await this.kill(rec);
    rmSync(this.dir(name), { recursive: true, force: true });
    return true;
  }

  /** Every deployment with its state, oldest first; revisions numbered per pipeline. */
  rows(): LocalDeploymentRow[] {
    if (!existsSync(this.root)) return [];
    const recs = readdirSync(this.root)
      .map((n) => ({ n, rec: this.safeRecord(n) }))
      .filter((e): e is { n: string; rec: DeploymentRecord } => e.rec !== undefined)
      .sort((a, b) => (a.rec.created ?? '').localeCompare(b.rec.created ?? '') || a.n.localeCompare(b.n));
    const count = new Map<string, number>();
    return recs.map(({ n, rec }) => {
      const alive = isAlive(rec.pid, rec.startTime);
      const state = rec.state === 'retired' || rec.state === 'stopped' ? rec.state : alive ? 'serving' : 'exited';
      const revision = rec.pipeline ? (count.set(rec.pipeline, (count.get(rec.pipeline) ?? 0) + 1), count.get(rec.pipeline)) : undefined;
      return { runtime: 'local', name: n, pipeline: rec.pipeline, tenant: rec.tenant, run: rec.workflowId, model: rec.model, checkpoint: rec.checkpoint, endpoint: alive ? this.endpoint(n) : undefined, state, pid: rec.pid, alive, created: rec.created, stopped: rec.stopped, retiredBy: rec.retiredBy, revision };
    });
  }

  private safeRecord(name: string): DeploymentRecord | undefined {
    try {
      return this.record(name);
    } catch {
      return undefined; // not a deployment directory (or a half-written record)
    }
  }

  list(): (DeploymentRef & { alive: boolean })[] {
    if (!existsSync(this.root)) return [];
    return readdirSync(this.root)
      .map((n) => ({ n, rec: this.record(n) }))
      .filter((e): e is { n: string; rec: DeploymentRecord } => e.rec !== undefined)
      .map(({ n, rec }) => ({ runtime: 'local' as const, name: n, endpoint: this.endpoint(n) ?? '', model: rec.model, checkpoint: rec.checkpoint, adopted: true, alive: isAlive(rec.pid, rec.startTime) }));
  }
}

/**
 * Stops every model server recorded under `dir` (any `deployments/<name>/deployment.json` up to four
 * levels down: the homes a test suite made under its directory) and returns the ones that were still
 * running — for test teardowns, which fail a suite that left one.
 */
export async function stopModelServersUnder(dir: string, depth = 4): Promise<{ home: string; name: string; pid: number }[]> {
  const found: { home: string; name: string; pid: number }[] = [];
  const walk = async (d: string, left: number): Promise<void> => {
    let names: string[];
    try {
      names = readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return;
    }
    if (names.includes('deployments')) {
      const serving = new LocalServingBackend(d);
      for (const r of serving.rows().filter((x) => x.alive)) {
        found.push({ home: d, name: r.name, pid: r.pid });
        await serving.stop(r.name);
      }
    }
    if (left > 0) for (const n of names) if (n !== 'deployments' && n !== 'node_modules') await walk(join(d, n), left - 1);
  };
  await walk(dir, depth);
  return found;
}
