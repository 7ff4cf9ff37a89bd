// Slurm administration through its own CLI (scontrol, sinfo, sbatch): partition membership and state,
// which neither FirecREST nor slurmrestd v0.0.38 can change. Used by staged migration; every call
// names the site's slurm.conf explicitly so several sites can live on one host.
import { execFile } from 'node:child_process';
import type { PartitionState } from '../contract/migration.js';
import { DEFAULTS } from '../config/defaults.js';
import { jobEnv } from './job-env.js';

export class SlurmAdminError extends Error {
  override name = 'SlurmAdminError';
}

export interface SlurmAdminOptions {
  slurmConf: string;
  /** Directory for benchmark job scripts and output. */
  workDir: string;
  timeoutMs?: number;
}

/** Parses scontrol's one-line `Key=Value Key=Value` records; values may contain '=' but not spaces. */
export function parseRecord(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const token of line.trim().split(/\s+/)) {
    const i = token.indexOf('=');
    if (i > 0) out[token.slice(0, i)] = token.slice(i + 1);
  }
  return out;
}

export class SlurmAdmin {
  constructor(private readonly opts: SlurmAdminOptions) {}

  run(cmd: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      // argv, never a shell: partition and node names are validated but still never re-parsed.
      // The site's slurm.conf and the job allowlist only: sbatch exports its environment to the
      // benchmark job, which must not see the worker's secrets (backends/job-env.ts).
      execFile(cmd, args, { env: jobEnv({ SLURM_CONF: this.opts.slurmConf }), timeout: this.opts.timeoutMs ?? DEFAULTS.slurmCommandTimeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (err) reject(new SlurmAdminError(`${cmd} ${args.join(' ')} failed: ${(stderr || err.message).trim()}`));
        else resolve(stdout);
      });
    });
  }

  async expand(hostlist: string): Promise<string[]> {
    if (!hostlist || hostlist === '(null)') return [];
    return (await this.run('scontrol', ['show', 'hostnames', hostlist])).split('\n').filter(Boolean);
  }

  async compress(nodes: string[]): Promise<string> {
    return nodes.length === 0 ? '' : (await this.run('scontrol', ['show', 'hostlist', nodes.join(',')])).trim();
  }

  async partitions(): Promise<PartitionState[]> {
    const out = await this.run('scontrol', ['show', 'partition', '-o']);
    const parts: PartitionState[] = [];
    for (const line of out.split('\n').filter((l) => l.includes('PartitionName='))) {
      const r = parseRecord(line);
      parts.push({ name: r.PartitionName!, nodes: (await this.expand(r.Nodes ?? '')).sort(), state: r.State ?? 'UNKNOWN', overSubscribe: r.OverSubscribe });
    }
    return parts.sort((a, b) => a.name.localeCompare(b.name));
  }

  async partition(name: string): Promise<PartitionState | undefined> {
    return (await this.partitions()).find((p) => p.name === name);
  }

  /** Makes a partition look exactly like `p` (creating it if needed); returns whether anything changed. */
  async setPartition(p: PartitionState): Promise<boolean> {
    const current = await this.partition(p.name);
    const nodes = await this.compress(p.nodes);
    const same = current && current.state === p.state && current.nodes.join(',') === [...p.nodes].sort().join(',') && (p.overSubscribe === undefined || current.overSubscribe === p.overSubscribe);
    if (same) return false;
    const fields = [`PartitionName=${p.name}`, `Nodes=${nodes || '""'}`, `State=${p.state}`];
    if (p.overSubscribe) fields.push(`OverSubscribe=${p.overSubscribe}`);
    if (current) await this.run('scontrol', ['update', ...fields]);
    else await this.run('scontrol', ['create', ...fields]);
    return true;
  }

  async deletePartition(name: string): Promise<boolean> {
    if (!(await this.partition(name))) return false;
    await this.run('scontrol', ['delete', `PartitionName=${name}`]);
    return true;
  }

  /** Allocated and total CPUs of a partition's nodes (sinfo's A/I/O/T). */
  async cpuUsage(partition: string): Promise<{ allocated: number; total: number }> {
    const out = (await this.run('sinfo', ['-h', '-p', partition, '-o', '%C'])).trim();
    const [a, , , t] = (out.split('\n')[0] ?? '0/0/0/0').split('/').map(Number);
    return { allocated: a ?? 0, total: t ?? 0 };
  }

  /** Jobs (still known to slurmctld) of one partition: state, submit/start/end times. */
  async jobs(partition: string): Promise<{ id: string; name: string; state: string; submit: number; start?: number; end?: number }[]> {
    const out = await this.run('squeue', ['-h', '-t', 'all', '-p', partition, '-o', '%i|%j|%T|%V|%S|%e']);
    const t = (s: string | undefined) => (s && /^\d{4}-/.test(s) ? Date.parse(`${s}Z`) : undefined);
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [id, name, state, submit, start, end] = l.split('|');
        return { id: id!, name: name!, state: state!, submit: t(submit) ?? 0, start: t(start), end: t(end) };
      });
  }

  /** Submits a batch script with a deterministic name unless a job of that name is already known. */
  async submitOnce(name: string, partition: string, script: string, extra: string[] = []): Promise<string> {
    const existing = (await this.run('squeue', ['-h', '-t', 'all', '-n', name, '-o', '%i'])).trim().split('\n').filter(Boolean);
    if (existing.length > 0) return existing[0]!;
    const out = await this.run('sbatch', ['--parsable', '-J', name, '-p', partition, '-D', this.opts.workDir, '-o', `${this.opts.workDir}/${name}.out`, ...extra, '--wrap', script]);
    return out.trim().split(';')[0]!;
  }

  async job(id: string): Promise<Record<string, string> | undefined> {
    const out = await this.run('scontrol', ['show', 'job', '-o', id]).catch(() => '');
    return out.includes('JobId=') ? parseRecord(out) : undefined;
  }
}
