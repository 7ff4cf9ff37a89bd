// Model serving on the local runtime: one detached server process per deployment name, with its
// state in <home>/deployments/<name>/ so a restarted worker finds (and does not duplicate) it.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinCommand } from '../programs/commands.js';
import { isAlive, killGroup, processStartTime } from './proc.js';
import { failure } from '../contract/failures.js';
import { jobEnv, unspawnable } from './job-env.js';
import { DEFAULTS } from '../config/defaults.js';

export interface DeploymentRef {
  runtime: 'local' | 'kubernetes';
  name: string;
  endpoint: string;
  model: string;
  checkpoint: string;
  adopted: boolean;
}

interface DeploymentRecord extends Omit<DeploymentRef, 'adopted' | 'endpoint'> {
  pid: number;
  startTime?: number;
}

export interface LocalDeployRequest {
  name: string;
  model: string;
  checkpoint: string;
  command?: string[];
  env?: Record<string, string>;
  /** How long to wait for the server to bind its port. */
  bindTimeoutMs?: number;
}

export class LocalServingBackend {
  private readonly root: string;

  constructor(home: string) {
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

  private endpoint(name: string): string | undefined {
    const f = join(this.dir(name), 'endpoint.json');
    return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { url: string }).url : undefined;
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
    const dir = this.dir(req.name);
    mkdirSync(dir, { recursive: true });
    const log = openSync(join(dir, 'server.log'), 'a');
    const child = spawn(command[0]!, command.slice(1), {
      cwd: dir,
      detached: true,
      stdio: ['ignore', log, log],
      // Never the worker's own environment (its secrets would reach server.log and the failure): backends/job-env.ts.
      env: jobEnv(req.env, { TANDEM_CHECKPOINT: req.checkpoint, TANDEM_MODEL_ID: req.model, TANDEM_ENDPOINT_FILE: join(dir, 'endpoint.json') }),
    });
    closeSync(log);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start model server ${command[0]}`);
    const record: DeploymentRecord = { runtime: 'local', name: req.name, model: req.model, checkpoint: req.checkpoint, pid: child.pid, startTime: processStartTime(child.pid)?.start };
    writeFileSync(join(dir, 'deployment.json'), JSON.stringify(record, null, 2));
    const endpoint = await this.waitForEndpoint(req.name, record.pid, record.startTime, req.bindTimeoutMs);
    return { runtime: 'local', name: req.name, endpoint, model: req.model, checkpoint: req.checkpoint, adopted: false };
  }

  private async waitForEndpoint(name: string, pid: number, startTime: number | undefined, timeoutMs: number = DEFAULTS.localServingBindTimeoutMs): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const url = this.endpoint(name);
      if (url) return url;
      if (!isAlive(pid, startTime)) {
        const log = existsSync(join(this.dir(name), 'server.log')) ? readFileSync(join(this.dir(name), 'server.log'), 'utf8').trim().split('\n').slice(-10).join('\n') : '';
        throw new Error(`model server for ${name} exited before binding a port${log ? `:\n${log}` : ''}`);
      }
      if (Date.now() > deadline) throw new Error(`model server for ${name} did not bind a port within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Idempotent: stopping an unknown deployment is not an error. */
  async undeploy(name: string): Promise<boolean> {
    const rec = this.record(name);
    if (!rec) return false;
    if (isAlive(rec.pid, rec.startTime)) {
      killGroup(rec.pid, 'SIGTERM');
      const deadline = Date.now() + 5000;
      while (isAlive(rec.pid, rec.startTime) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (isAlive(rec.pid, rec.startTime)) killGroup(rec.pid, 'SIGKILL');
    }
    rmSync(this.dir(name), { recursive: true, force: true });
    return true;
  }

  list(): (DeploymentRef & { alive: boolean })[] {
    if (!existsSync(this.root)) return [];
    return readdirSync(this.root)
      .map((n) => ({ n, rec: this.record(n) }))
      .filter((e): e is { n: string; rec: DeploymentRecord } => e.rec !== undefined)
      .map(({ n, rec }) => ({ runtime: 'local' as const, name: n, endpoint: this.endpoint(n) ?? '', model: rec.model, checkpoint: rec.checkpoint, adopted: true, alive: isAlive(rec.pid, rec.startTime) }));
  }
}
