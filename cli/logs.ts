// `tandem logs <run> [--stage S] [--attempt N] [--follow]`: a run's job output, wherever the job ran.
// The run's timeline names every job attempt (stage, attempt, runtime, site, job id); the output is
// read where the job's backend keeps it:
// - local: <home>/jobs/<job>/stdout and stderr (the workers' TANDEM_HOME, --home); the deploy stage's
//   model server: <home>/deployments/<name>/server.log;
// - Slurm: through the site's backend (FirecREST's file API, or the shared filesystem slurmrestd's
//   workers read), the job's --output file; the site is TANDEM_SLURM_* or an entry of TANDEM_SITES_FILE;
// - Kubernetes: the log of the Job's pod (container main), through the workers' KUBECONFIG.
// --follow prints what a running job adds, then goes on to the run's next job, until the run closes.
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { PipelineStatus, TimelineEntry } from '../contract/status.js';
import type { Connectors } from './connectors.js';

/** One job attempt of a run, as its timeline recorded it. */
export interface JobAttempt {
  stage: string;
  attempt: number;
  runtime: string;
  site?: string;
  jobId: string;
  at: string;
}

/**
 * The run's job attempts in the order they were submitted (an adopted job is the same attempt). The
 * deploy stage's entry names no job: its deployment is the stage's (`status`) jobId.
 */
export function jobAttempts(timeline: TimelineEntry[], status?: Pick<PipelineStatus, 'stages'>): JobAttempt[] {
  const out: JobAttempt[] = [];
  const deployment = status?.stages.deploy?.jobId;
  for (const raw of timeline) {
    const e = raw.stage === 'deploy' && !raw.jobId && deployment ? { ...raw, jobId: deployment } : raw;
    if ((e.kind !== 'job-submitted' && e.kind !== 'job-adopted') || !e.jobId || !e.stage) continue;
    const attempt = e.attempt ?? 1;
    if (out.some((a) => a.stage === e.stage && a.attempt === attempt && a.jobId === e.jobId)) continue;
    out.push({ stage: e.stage, attempt, runtime: e.runtime ?? 'local', site: e.site, jobId: e.jobId, at: e.at });
  }
  return out;
}

/** The attempts `--stage` and `--attempt` pick: by default every attempt's job of every stage. */
export function pickAttempts(all: JobAttempt[], stage?: string, attempt?: number, strict = true): JobAttempt[] {
  let picked = stage ? all.filter((a) => a.stage === stage) : all;
  if (!strict) return attempt === undefined ? picked : picked.filter((a) => a.attempt === attempt);
  if (stage && !picked.length) throw new LogsError(`the run has no job for stage ${stage} (its jobs: ${[...new Set(all.map((a) => a.stage))].join(', ') || 'none yet'})`);
  if (attempt !== undefined) {
    picked = picked.filter((a) => a.attempt === attempt);
    if (!picked.length) throw new LogsError(`no attempt ${attempt}${stage ? ` of stage ${stage}` : ''} (attempts: ${[...new Set(all.filter((a) => !stage || a.stage === stage).map((a) => a.attempt))].join(', ')})`);
  }
  return picked;
}

export class LogsError extends Error {
  override name = 'LogsError';
}

/** Where a job's output is read from: the text so far, and whether the job has ended. */
export interface OutputSource {
  read(): Promise<{ stdout: string; stderr?: string }>;
  done(): Promise<boolean>;
}

function readFrom(path: string, offset = 0): string {
  if (!existsSync(path)) return '';
  const size = statSync(path).size;
  if (size <= offset) return '';
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export async function localSource(home: string, a: JobAttempt): Promise<OutputSource> {
  if (a.stage === 'deploy') {
    const dir = join(home, 'deployments', a.jobId);
    const { endpointFiles } = await import('../backends/local-serving.js');
    return { read: async () => ({ stdout: readFrom(join(dir, 'server.log')) }), done: async () => !endpointFiles(dir).some((f) => existsSync(f)) };
  }
  const dir = join(home, 'jobs', a.jobId);
  if (!existsSync(dir)) throw new LogsError(`job ${a.jobId} has no directory under ${join(home, 'jobs')}: give the workers' TANDEM_HOME with --home (\`tandem dev\`: its --state)`);
  return {
    read: async () => ({ stdout: readFrom(join(dir, 'stdout')), stderr: readFrom(join(dir, 'stderr')) }),
    done: async () => {
      const { LocalJobBackend } = await import('../backends/local-jobs.js');
      const { classifyJobState } = await import('../contract/outcome.js');
      return classifyJobState((await new LocalJobBackend(home).status(a.jobId)).state) !== 'active';
    },
  };
}

/** A backend that can tell a job's state and read its output (Slurm, Kubernetes). */
interface OutputBackend {
  status(jobId: string): Promise<{ state: import('../contract/outcome.js').JobState }>;
  output(jobId: string): Promise<string | undefined>;
}

async function remoteSource(b: OutputBackend, a: JobAttempt): Promise<OutputSource> {
  const { classifyJobState } = await import('../contract/outcome.js');
  return { read: async () => ({ stdout: (await b.output(a.jobId)) ?? '' }), done: async () => classifyJobState((await b.status(a.jobId)).state) !== 'active' };
}

/** The backend of a Slurm or Kubernetes attempt, from the configuration the workers use. */
async function backendFor(a: JobAttempt): Promise<OutputBackend> {
  const { loadWorkerConfig } = await import('../config/worker.js');
  const config = loadWorkerConfig();
  if (a.runtime === 'kubernetes') {
    if (!config.kubernetes.cluster) throw new LogsError(`job ${a.jobId} ran on Kubernetes, but no cluster is configured here: set KUBECONFIG as for the workers`);
    const [{ KubeClients }, { KubernetesJobBackend }] = await Promise.all([import('../backends/kubernetes/client.js'), import('../backends/kubernetes/jobs.js')]);
    return new KubernetesJobBackend({ clients: new KubeClients({ kubeconfigPath: config.kubernetes.cluster.kubeconfigPath, namespace: config.kubernetes.namespace }), defaultImage: '' });
  }
  if (a.runtime === 'slurm') {
    if (config.slurm && (!a.site || a.site === config.slurm.site)) {
      const { slurmBackend } = await import('../backends/slurm/index.js');
      return slurmBackend(config.slurm) as unknown as OutputBackend;
    }
    if (config.sites) {
      const { recoverySites } = await import('../activities/recovery-sites.js');
      const site = recoverySites(config.sites.parsed, config.sites.secrets).find((s) => s.name === a.site);
      if (site) return site.backend as unknown as OutputBackend;
    }
    throw new LogsError(`job ${a.jobId} ran at Slurm site ${a.site ?? '?'}, which neither TANDEM_SLURM_* nor TANDEM_SITES_FILE configures here`);
  }
  throw new LogsError(`job ${a.jobId}: no logs for runtime ${a.runtime}`);
}

export async function sourceFor(home: string, a: JobAttempt): Promise<OutputSource> {
  return a.runtime === 'local' ? localSource(home, a) : remoteSource(await backendFor(a), a);
}

const header = (a: JobAttempt) => `==> ${a.stage} attempt ${a.attempt}: ${a.runtime}${a.site && a.site !== a.runtime ? ` ${a.site}` : ''} job ${a.jobId} <==`;

/** Prints the text a source added since `seen` (by length: job output only grows). */
function printNew(text: string, seen: number, out: (s: string) => void): number {
  if (text.length > seen) out(text.slice(seen));
  return Math.max(seen, text.length);
}

const positive = (flag: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number from 1, not ${JSON.stringify(v)}.`);
  return n;
};

export function registerLogsCommand(program: Command, c: Connectors): void {
  program
    .command('logs <run>')
    .description("a run's job output (stdout, then stderr), local, Slurm or Kubernetes; --follow keeps printing until the run closes")
    .option('--stage <stage>', 'only this stage (preprocess, train, deploy, …)')
    .option('--attempt <n>', "only this attempt of the stage's job", positive('--attempt'))
    .option('--follow', "print what the running job adds, then the run's next jobs, until the run closes")
    .option('--home <dir>', "the workers' TANDEM_HOME, for local jobs (default: $TANDEM_HOME, or .tandem; `tandem dev`: its --state)")
    .addHelpText('after', '\nExamples:\n  tandem logs demo-3f2a --stage train             # every training attempt\n  tandem logs demo-3f2a --stage train --attempt 2\n  tandem logs demo-3f2a --follow                  # like tail -f, across the run\'s jobs')
    .action(async (id: string, o: { stage?: string; attempt?: number; follow?: boolean; home?: string }) => {
      const { loadCliConfig } = await import('../config/worker.js');
      const home = resolve(o.home ?? loadCliConfig().home);
      const client = await c.connect();
      const write = (s: string) => process.stdout.write(s);
      try {
        const h = await client.get(id);
        const { describeExecution } = await import('../sdk/list.js');
        const open = async () => (await describeExecution(client.client, id)).status === 'RUNNING';
        const printed = new Map<string, { out: number; err: number }>();
        const key = (a: JobAttempt) => `${a.stage}/${a.attempt}/${a.jobId}`;
        const show = async (a: JobAttempt, src: OutputSource) => {
          const seen = printed.get(key(a)) ?? { out: 0, err: 0 };
          const { stdout, stderr } = await src.read();
          seen.out = printNew(stdout, seen.out, write);
          if (stderr && stderr.length > seen.err) {
            if (!o.follow) write(`--- stderr ---\n`);
            seen.err = printNew(stderr, seen.err, write);
          }
          printed.set(key(a), seen);
        };
        // Following, a stage or attempt may not have started yet: it is waited for.
        let attempts = pickAttempts(jobAttempts(await h.timeline(), await h.status()), o.stage, o.attempt, !o.follow);
        if (!o.follow) {
          if (!attempts.length) return console.log(`${id}: no job has started yet`);
          for (const a of attempts) {
            console.log(header(a));
            await show(a, await sourceFor(home, a));
          }
          return;
        }
        // Follow: each job in turn, as long as it runs; then the next one the run starts.
        const done = new Set<string>();
        for (;;) {
          const running = await open();
          for (const a of attempts) {
            if (done.has(key(a))) continue;
            if (!printed.has(key(a))) console.log(header(a));
            const src = await sourceFor(home, a);
            const ended = await src.done();
            await show(a, src);
            if (ended || !running) done.add(key(a));
          }
          if (!running) break;
          await new Promise((r) => setTimeout(r, 500));
          attempts = pickAttempts(jobAttempts(await h.timeline(), await h.status()), o.stage, o.attempt, false);
        }
        console.log(`==> ${id} closed <==`);
      } finally {
        await client.close();
      }
    });
}
