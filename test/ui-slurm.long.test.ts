// `tandem ui`'s Gantt against real Slurm (test:long: two clusters start; about a minute): zurich through
// slurmrestd, lugano through the FirecREST gateway (test/recovery/sites.ts). A training job that really queues at zurich (its
// partition is down when it is submitted), then runs, then loses its site (zurich's daemons killed) and
// fails over to lugano. The queue wait, the run time and the failover on the run page are checked
// against what the run's history recorded — the states its watches observed, with their times.
import { createActivities } from '../activities/index.js';
import { createRecoveryActivities } from '../activities/recovery.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import type { ObservedState } from '../activities/observed-states.js';
import { Runs } from '../sdk/runs.js';
import { startUiServer } from '../ui/server.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';
import { useTwoSites, type TestSite } from './recovery/sites.js';
import { ARTIFACTS, CHROMIUM, chromium } from './chromium.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let zurich: TestSite;
let lugano: TestSite;
// zurich through slurmrestd, lugano through the FirecREST gateway (checksums verify the restored copy).
useTwoSites((z, l) => ([zurich, lugano] = [z, l]));

const stepOf = (site: TestSite, job: string): number => {
  try {
    return (JSON.parse(readFileSync(join(site.cluster.workDir, `${job}.progress.json`), 'utf8')) as { step: number }).step;
  } catch {
    return 0;
  }
};

test('a job queued at zurich, then running, then failed over to lugano: queue wait, run time and the failover on the run page, as the history recorded them', async () => {
  const home = tempDir('ui-slurm');
  const id = uniqueQueue('ui-slurm');
  const w = await startWorker({ taskQueue: uniqueQueue('ui-slurm'), home, activities: { ...createActivities({ home }), ...createRecoveryActivities({ home, sites: [zurich.site, lugano.site], healthTimeoutMs: 3000 }) } });
  const ui = await startUiServer({ tandem: w.tandem, home, port: 0, noAuth: true });
  try {
    // A closed partition queues the job without starting it.
    await zurich.cluster.cli('scontrol', ['update', 'PartitionName=debug', 'State=DOWN']);
    const h = await w.tandem.launch(spec({ stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'slurm', steps: 140, checkpointEvery: 10, stepDelayMs: 150 }, deploy: { runtime: 'local' } } }), {
      id,
      tuning: { heartbeatTimeoutMs: 3000, pollMaxMs: 500, failover: { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 4000 } },
    });
    const job1 = await jobNameOf(h.workflow, 'train', 1);
    const squeue = () => zurich.cluster.cli('squeue', ['-h', '-n', job1, '-o', '%T']);
    await waitFor('the training job queued at zurich', async () => ((await squeue()).trim() === 'PENDING' ? true : undefined), 60_000, 200);
    await new Promise((r) => setTimeout(r, 2000));
    const openedAt = Date.now();
    await zurich.cluster.cli('scontrol', ['update', 'PartitionName=debug', 'State=UP']);
    await waitFor('training at zurich to pass step 35', () => (stepOf(zurich, job1) >= 35 ? true : undefined), 90_000, 200);
    await zurich.outage();
    await h.result();

    const report = await new Runs(w.tandem).show(id);
    const watches = report.activities.filter((a) => a.type === 'watchAt');
    const observed = (a: (typeof watches)[number]) => ((a.result as { observed?: ObservedState[]; status?: { observed?: ObservedState[] } }).status?.observed ?? (a.result as { observed?: ObservedState[] }).observed)!;
    // zurich: seen PENDING, then RUNNING (only after the partition opened); the site then stopped answering.
    const atZurich = watches.filter((a) => (a.input as { ref: { site: string } }).ref.site === 'zurich');
    const seen = atZurich.flatMap(observed);
    expect(seen[0]!.state).toBe('PENDING');
    const running = seen.find((o) => o.state === 'RUNNING')!;
    expect(running.at).toBeGreaterThanOrEqual(openedAt);

    const html = await (await fetch(`${ui.url}/runs/${encodeURIComponent(id)}`)).text();
    const rows = [...html.matchAll(/<g class="attempt" data-stage="train" data-job="([^"]+)" data-split="(\w[\w-]*)">([\s\S]*?)<\/g>/g)];
    expect(rows.map((r) => r[2])).toEqual(['observed', 'observed']);
    const seg = (row: string, kind: string) => /data-from="(\d+)" data-to="(\d+)"/.exec(new RegExp(`<rect class="${kind}"[^>]*>`).exec(row)![0])!.slice(1).map(Number) as [number, number];
    // Queue wait: from the watch's scheduling (right after the submission) to RUNNING first seen.
    const [q0, q1] = seg(rows[0]![3]!, 'queue');
    expect(q0).toBe(atZurich[0]!.scheduledAt!.getTime());
    expect(q1).toBe(running.at);
    expect(q1 - q0).toBeGreaterThanOrEqual(2000);
    expect(rows[0]![3]).toMatch(/<title>queue wait [\d.]+ s \(PENDING\)<\/title>/);
    expect(seg(rows[0]![3]!, 'run')[0]).toBe(running.at);
    expect(rows[0]![3]).toMatch(/<rect class="run" [^>]*fill="#e67e22"><title>running [\d.]+ s, last seen RUNNING; then site unreachable for \d+ s/);
    // lugano: the resumed job is COMPLETED; what its watch saw decides whether any queue wait shows.
    const atLugano = watches.filter((a) => (a.input as { ref: { site: string } }).ref.site === 'lugano').flatMap(observed);
    expect(atLugano[atLugano.length - 1]!.state).toBe('COMPLETED');
    const [l0, l1] = seg(rows[1]![3]!, 'queue');
    expect(l1 - l0 > 0).toBe(atLugano[0]!.state === 'PENDING');
    // The failover away from zurich, marked at the end of its last watch; the next attempt ran at lugano.
    expect(rows[1]![3]).toContain(`submit ${rows[1]![1]} to lugano`);
    const marker = /<g class="marker" data-kind="failover"><line x1="[\d.]+"[^>]*>[\s\S]*?<title>([^<]+)<\/title><\/g>/.exec(html);
    expect(marker?.[1]).toMatch(/^train attempt 1: site unreachable for \d+ s.* at zurich; failover to lugano$/);
    expect(html).toContain('<g class="marker" data-kind="fence">');
    // The picture, for reports and the README: the timeline as Chromium renders it.
    if (CHROMIUM) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, 'failover-timeline.png');
      const height = Number(/class="tandem-timeline" width="\d+" height="(\d+)"/.exec(html)![1]);
      await chromium([`--screenshot=${file}`, `${ui.url}/runs/${encodeURIComponent(id)}/timeline.svg`], { window: `960,${height}` });
      expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
    }
  } finally {
    await ui.close();
    await w.stop();
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
  }
}, 240_000);
