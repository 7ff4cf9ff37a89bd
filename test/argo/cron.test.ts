// CronWorkflow → Temporal Schedule: Argo's cron-workflow example becomes a Schedule with its cron
// spec, timezone and concurrencyPolicy; triggering it runs argoWorkflow to Succeeded; suspend and
// the other policies map onto paused / overlap.
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { ArgoClient, prepare } from '../../argo/client.js';
import type { ArgoStatus } from '../../argo/lang/types.js';
import { waitFor } from '../helpers.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;
beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo-cron'));
});
afterAll(() => stop?.());

const cron = (policy: string, suspend: boolean) => `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: nightly}
spec:
  schedules: ["30 2 * * *", "0 14 * * 1"]
  timezone: Europe/Zurich
  concurrencyPolicy: ${policy}
  suspend: ${suspend}
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: alpine, command: [sh, -c, "echo nightly"]}
`;

test("Argo's cron-workflow example becomes a Schedule; triggering it runs the workflow to Succeeded", async () => {
  const name = `hello-${randomBytes(3).toString('hex')}`;
  const r = await client.submit(prepare(join('/work/shared/data/argo-examples', 'cron-workflow.yaml')), { name });
  expect(r).toEqual({ id: name, schedule: true });
  const handle = client.client.schedule.getHandle(`argo-cron-${name}`);
  const d = await handle.describe();
  expect(d.spec.timezone).toBe('America/Los_Angeles');
  // "* * * * *": consecutive actions a minute apart.
  const next = d.info.nextActionTimes.map((t) => t.getTime());
  expect(next[1]! - next[0]!).toBe(60_000);
  expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.CANCEL_OTHER); // concurrencyPolicy: Replace
  expect(d.state.paused).toBe(false);
  expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'argoWorkflow', taskQueue: client.taskQueue });

  await handle.trigger();
  const wid = await waitFor('the triggered run', async () => (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId);
  expect(wid.startsWith(`argo-${name}`)).toBe(true);
  const st = (await client.client.workflow.getHandle(wid).result()) as ArgoStatus;
  expect(st.phase).toBe('Succeeded');
  const pod = Object.values(st.nodes).find((n) => n.type === 'Pod')!;
  expect(pod.outputs?.result).toMatch(/^🕓 hello world\. Scheduled on: \d{4}-\d\d-\d\dT/);
  await handle.delete();
});

test('schedules, timezone, suspend and concurrencyPolicy Forbid/Allow map onto the Schedule', async () => {
  for (const [policy, suspend, overlap] of [
    ['Forbid', true, ScheduleOverlapPolicy.SKIP],
    ['Allow', false, ScheduleOverlapPolicy.ALLOW_ALL],
  ] as const) {
    const name = `nightly-${randomBytes(3).toString('hex')}`;
    await client.submit(prepare('cron.yaml', { text: cron(policy, suspend) }), { name });
    const handle = client.client.schedule.getHandle(`argo-cron-${name}`);
    const d = await handle.describe();
    expect(d.spec.timezone).toBe('Europe/Zurich');
    expect(d.policies.overlap).toBe(overlap);
    expect(d.state.paused).toBe(suspend);
    // 02:30 every day and 14:00 on Mondays, Zurich time.
    const hours = new Set(d.info.nextActionTimes.map((t) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Zurich', hour: '2-digit', minute: '2-digit', weekday: 'short' }).format(t)));
    expect([...hours].every((h) => /02:30$/.test(h) || /^Mon 14:00$/.test(h))).toBe(true);
    if (!suspend) expect(hours.size).toBeGreaterThan(0);
    await handle.delete();
  }
});

test("Argo v3.x's single schedule (the form its docs showed for years) becomes the Schedule's cron spec", async () => {
  const name = `single-${randomBytes(3).toString('hex')}`;
  const text = cron('Forbid', true).replace('  schedules: ["30 2 * * *", "0 14 * * 1"]', '  schedule: "15 4 * * *"');
  await client.submit(prepare('cron.yaml', { text }), { name });
  const handle = client.client.schedule.getHandle(`argo-cron-${name}`);
  try {
    const d = await handle.describe();
    const times = d.info.nextActionTimes.map((t) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Zurich', hour: '2-digit', minute: '2-digit' }).format(t));
    expect(times.length).toBeGreaterThan(0);
    expect(new Set(times)).toEqual(new Set(['04:15']));
  } finally {
    await handle.delete();
  }
});
