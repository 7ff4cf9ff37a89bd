// Pure units of the Slurm backends: script generation and quoting, state and error mapping, the
// shared status poller, idempotent submit and the 404-after-submit grace.
import { execFileSync } from 'node:child_process';
import { renderBatchJob, shellQuote } from '../../backends/slurm/script.js';
import { classifyHttp, parseRetryAfter, withRetries, SlurmApiError } from '../../backends/slurm/errors.js';
import { decodeWaitStatus, toJobState } from '../../backends/slurm/states.js';
import { StatusPoller } from '../../backends/slurm/status-poller.js';
import { SlurmJobBackend } from '../../backends/slurm/job-backend.js';
import type { SiteApi, SiteJob } from '../../backends/slurm/site-api.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { request } from './jobs.js';

describe('batch script', () => {
  test('#SBATCH lines come from the spec', () => {
    const { script } = renderBatchJob(
      request('tandem-run-train-1', ['/usr/bin/python3', 'train.py'], {
        resources: ResourcesSchema.parse({ nodes: 2, tasksPerNode: 4, cpusPerTask: 8, gpusPerNode: 4, memoryMB: 64000, partition: 'normal', account: 'csstaff', constraint: 'gpu&a100', reservation: 'tandem-res' }),
        walltimeMs: 90 * 60_000 + 1,
      }),
      { workDir: '/scratch/tandem', site: 'alps' },
    );
    expect(script.split('\n').filter((l) => l.startsWith('#SBATCH'))).toEqual([
      '#SBATCH --job-name=tandem-run-train-1',
      '#SBATCH --nodes=2',
      '#SBATCH --ntasks-per-node=4',
      '#SBATCH --cpus-per-task=8',
      '#SBATCH --gpus-per-node=4',
      '#SBATCH --mem=64000M',
      '#SBATCH --time=0-01:31:00',
      '#SBATCH --partition=normal',
      '#SBATCH --account=csstaff',
      '#SBATCH --constraint=gpu&a100',
      '#SBATCH --reservation=tandem-res',
      '#SBATCH --no-requeue',
      '#SBATCH --chdir=/scratch/tandem',
      '#SBATCH --output=/scratch/tandem/tandem-run-train-1.out',
      '#SBATCH --error=/scratch/tandem/tandem-run-train-1.err',
    ]);
    expect(script).toMatch(/\nexec '\/usr\/bin\/python3' 'train\.py'\n$/);
  });

  test.each([
    `"; rm -rf ~ #`,
    `'; rm -rf ~ #`,
    '$(id) `id` ${HOME} $HOME \\ \n newline',
    "it's a 'quote' \"and\" more",
    '--partition=evil',
  ])('shellQuote makes %j a single literal word for bash', (hostile) => {
    const out = execFileSync('bash', ['-c', `printf '%s' ${shellQuote(hostile)}`], { encoding: 'utf8' });
    expect(out).toBe(hostile);
  });

  test('values Slurm itself parses are refused unless strictly safe', () => {
    const base = ResourcesSchema.parse({});
    const bad: [string, object][] = [
      ['partition', { ...base, partition: 'debug\n#SBATCH --uid=0' }],
      ['account', { ...base, account: 'a b' }],
      ['constraint', { ...base, constraint: 'x;y' }],
      ['reservation', { ...base, reservation: '$(id)' }],
      ['nodes', { ...base, nodes: 1.5 }],
    ];
    for (const [field, resources] of bad) {
      expect(() => renderBatchJob(request('ok-name', ['/bin/true'], { resources: resources as never }), { workDir: '/tmp', site: 's' })).toThrow(new RegExp(field));
    }
    expect(() => renderBatchJob(request('bad name', ['/bin/true']), { workDir: '/tmp', site: 's' })).toThrow(/job name/);
    expect(() => renderBatchJob(request('ok', ['/bin/true'], { env: { 'A;B': 'x' } }), { workDir: '/tmp', site: 's' })).toThrow(/environment variable name/);
    expect(() => renderBatchJob(request('ok', ['/bin/true']), { workDir: '/tmp/with space', site: 's' })).toThrow(/working directory/);
    expect(() => renderBatchJob(request('ok', ['a\0b']), { workDir: '/tmp', site: 's' })).toThrow(/NUL/);
  });

  test('environment values travel through the API, never through the script', () => {
    const job = renderBatchJob(request('ok', ['/bin/true'], { env: { SECRETISH: '"; rm -rf ~ #' } }), { workDir: '/w', site: 'alps' });
    expect(job.script).not.toContain('rm -rf');
    expect(job.env).toMatchObject({ SECRETISH: '"; rm -rf ~ #', TANDEM_JOB_ID: 'ok', TANDEM_SITE: 'alps', TANDEM_PROGRESS_FILE: '/w/ok.progress.json' });
  });
});

describe('state and error mapping', () => {
  test('Slurm states', () => {
    expect(toJobState('COMPLETED')).toBe('COMPLETED');
    expect(toJobState('CANCELLED by 0')).toBe('CANCELLED');
    expect(toJobState(['RUNNING', 'COMPLETING'])).toBe('RUNNING');
    expect(toJobState('NF')).toBe('NODE_FAIL');
    expect(toJobState('REQUEUED')).toBe('PENDING');
    expect(toJobState('SPECIAL_EXIT')).toBe('FAILED');
    expect(toJobState('SOMETHING_NEW')).toBeUndefined();
    expect(decodeWaitStatus(768)).toEqual({ exitCode: 3 });
    expect(decodeWaitStatus(9)).toEqual({ exitCode: 137, signal: 9 });
  });

  test('HTTP statuses: observation, placement, not found, invalid', () => {
    const c = (status: number, serverMessage?: string) => classifyHttp({ method: 'GET', path: '/x', status, serverMessage });
    for (const s of [401, 408, 424, 429, 500, 502, 503, 504]) expect(c(s).kind).toBe('observation');
    expect(c(403, 'Job violates accounting/QOS policy (job submit limit, user\'s size and/or time limits)').kind).toBe('placement');
    expect(c(403, 'permission denied').kind).toBe('invalid');
    expect(c(404).kind).toBe('not-found');
    expect(c(400).kind).toBe('invalid');
    expect(c(400).name).toBe('InvalidRequest');
    expect(c(503).name).toBe('ObservationFailed');
    expect(classifyHttp({ method: 'GET', path: '/slurm/v0.0.38/job/9', status: 500, slurmErrors: [2017] }).kind).toBe('not-found');
    expect(classifyHttp({ method: 'POST', path: '/slurm/v0.0.38/job/submit', status: 500, slurmErrors: [2000], serverMessage: 'Invalid partition name specified' }).kind).toBe('invalid');
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
  });

  test('withRetries honours Retry-After, and never retries invalid requests', async () => {
    const sleeps: number[] = [];
    let calls = 0;
    const r = await withRetries(async () => {
      if (++calls < 3) throw new SlurmApiError('observation', 'busy', 429, 2000);
      return 'ok';
    }, { attempts: 5, initialMs: 10, maxMs: 100 }, async (ms) => void sleeps.push(ms));
    expect(r).toBe('ok');
    expect(sleeps).toEqual([2000, 2000]);
    calls = 0;
    await expect(withRetries(async () => {
      calls++;
      throw new SlurmApiError('invalid', 'bad');
    }, { attempts: 5, initialMs: 1, maxMs: 1 }, async () => {})).rejects.toMatchObject({ kind: 'invalid' });
    expect(calls).toBe(1);
  });
});

class FakeSite implements SiteApi {
  jobs: SiteJob[] = [];
  lists = 0;
  gets = 0;
  submits = 0;
  hideNew = false;
  failNextSubmitAfterCreating = false;
  async listJobs() {
    this.lists++;
    return this.hideNew ? [] : this.jobs.map((j) => ({ ...j }));
  }
  async getJob(id: string) {
    this.gets++;
    return this.hideNew ? undefined : this.jobs.find((j) => j.jobId === id);
  }
  async submit(job: { directives: { jobName: string } }) {
    this.submits++;
    const id = String(100 + this.jobs.length);
    this.jobs.push({ jobId: id, name: job.directives.jobName, state: 'PENDING' });
    if (this.failNextSubmitAfterCreating) {
      this.failNextSubmitAfterCreating = false;
      throw new SlurmApiError('observation', 'connection dropped after the job was created');
    }
    return id;
  }
  async cancel(id: string) {
    if (!this.jobs.some((j) => j.jobId === id)) throw new SlurmApiError('not-found', 'gone');
  }
  async tail() {
    return undefined;
  }
}

describe('job backend over a site', () => {
  test('many watchers share one listing per interval', async () => {
    const site = new FakeSite();
    for (let i = 0; i < 50; i++) site.jobs.push({ jobId: String(i), name: `j${i}`, state: 'RUNNING' });
    let now = 0;
    const poller = new StatusPoller(site, { statusIntervalMs: 1000, now: () => now });
    await Promise.all(site.jobs.map((j) => poller.get(j.jobId)));
    expect(site.lists).toBe(1);
    now = 500;
    await Promise.all(site.jobs.map((j) => poller.get(j.jobId)));
    expect(site.lists).toBe(1);
    now = 1000;
    await poller.get('0');
    expect(site.lists).toBe(2);
  });

  test('the adaptive interval keeps listing requests within the per-job-hour budget', () => {
    let now = 0;
    const poller = new StatusPoller(new FakeSite(), { requestsPerJobHour: 100, now: () => now });
    expect(poller.intervalMs()).toBe(36_000);
    for (let i = 0; i < 1000; i++) void poller.get(String(i)).catch(() => undefined);
    now = 1;
    expect(poller.intervalMs()).toBe(2_000); // 1,000 jobs: 1,800 listings/h = 1.8 per job-hour
  });

  test('a submit whose answer was lost is adopted by name, never submitted twice', async () => {
    const site = new FakeSite();
    site.failNextSubmitAfterCreating = true;
    const backend = new SlurmJobBackend(site, { site: 's', workDir: '/w', statusIntervalMs: 0, sleep: async () => {} });
    const ref = await backend.submit(request('once', ['/bin/true']));
    expect(ref).toMatchObject({ jobId: '100', adopted: true });
    expect(site.submits).toBe(1);
  });

  test('a job missing right after submit is PENDING for the grace period, then LOST', async () => {
    const site = new FakeSite();
    let now = 0;
    const backend = new SlurmJobBackend(site, { site: 's', workDir: '/w', statusIntervalMs: 0, submitGraceMs: 20_000, now: () => now });
    const ref = await backend.submit(request('lagging', ['/bin/true']));
    site.hideNew = true;
    now = 19_000;
    expect((await backend.status(ref.jobId)).state).toBe('PENDING');
    now = 21_000;
    expect((await backend.status(ref.jobId)).state).toBe('LOST');
  });

  test('cancel: not found means already gone', async () => {
    const backend = new SlurmJobBackend(new FakeSite(), { site: 's', workDir: '/w' });
    await expect(backend.cancel('42')).resolves.toBeUndefined();
  });
});
