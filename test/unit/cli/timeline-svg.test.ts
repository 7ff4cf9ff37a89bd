// `tandem runs show --svg` and the run page's Gantt: a lane per stage, a row per job attempt split
// into queue wait and run time from the states its watch observed, a bar per other activity, placed on
// the run's time axis; failovers, fences and compensations marked; text escaped. The recorded
// histories (test/histories/) check the same against real runs' events, including the deployment view.
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { timelineSvg } from '../../../cli/timeline-svg.js';
import { analyseHistory, type RunReport } from '../../../sdk/history.js';
import { jobAttempts, markers } from '../../../ui/attempts.js';
import { deploymentView } from '../../../ui/deployment.js';
import { stateLog } from '../../../activities/observed-states.js';

const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, s));
const ref = (n: number) => ({ runtime: 'slurm', jobId: `j${n}`, name: `demo-train-${n}`, site: n === 1 ? 'zurich' : 'lugano', adopted: false });
const report: RunReport = {
  workflowId: 'demo-<1>',
  type: 'hybridPipeline',
  status: 'Failed',
  startedAt: t(0),
  closedAt: t(100),
  failure: 'stage train failed',
  events: 40,
  stages: [
    { name: 'preprocess', status: 'completed', attempts: 1, jobs: [], startedAt: t(0), finishedAt: t(10) },
    { name: 'train', status: 'failed', attempts: 2, jobs: [], startedAt: t(10), finishedAt: t(90) },
    { name: 'checkpoint', status: 'compensated', attempts: 1, jobs: [], startedAt: t(90), finishedAt: t(95) },
  ],
  activities: [
    { type: 'placeJob', stage: 'preprocess', scheduledEventId: 5, workflowTaskCompletedEventId: 4, scheduledAt: t(0), closedAt: t(1), attempt: 1, outcome: 'completed', compensation: false },
    // Attempt 1 at zurich: queued 10 s (PENDING seen at 12 s, RUNNING first seen at 20 s), then ran until NODE_FAIL at 50 s.
    { type: 'submitJob', stage: 'train', scheduledEventId: 9, workflowTaskCompletedEventId: 8, scheduledAt: t(10), closedAt: t(11), attempt: 1, outcome: 'completed', result: ref(1), compensation: false },
    { type: 'awaitJob', stage: 'train', scheduledEventId: 12, workflowTaskCompletedEventId: 11, scheduledAt: t(11), closedAt: t(50), attempt: 1, outcome: 'completed', input: { ref: ref(1) }, result: { jobId: 'j1', state: 'NODE_FAIL', reason: 'node c1 & <down>', observed: [{ state: 'PENDING', at: t(12).getTime() }, { state: 'RUNNING', at: t(20).getTime() }, { state: 'NODE_FAIL', at: t(50).getTime() }] }, compensation: false },
    { type: 'fenceJob', scheduledEventId: 14, workflowTaskCompletedEventId: 13, scheduledAt: t(51), closedAt: t(52), attempt: 1, outcome: 'completed', result: { fenced: true, detail: 'cancelled job j1 at zurich' }, compensation: false },
    // Attempt 2 at lugano: first seen RUNNING, so no queue wait was observed; failed.
    { type: 'submitJob', stage: 'train', scheduledEventId: 16, workflowTaskCompletedEventId: 15, scheduledAt: t(53), closedAt: t(54), attempt: 1, outcome: 'completed', result: ref(2), compensation: false },
    { type: 'awaitJob', stage: 'train', scheduledEventId: 18, workflowTaskCompletedEventId: 17, scheduledAt: t(54), closedAt: t(90), attempt: 2, outcome: 'completed', input: { ref: ref(2) }, result: { jobId: 'j2', state: 'FAILED', reason: 'exit 3 & <boom>', observed: [{ state: 'RUNNING', at: t(55).getTime() }, { state: 'FAILED', at: t(90).getTime() }] }, compensation: false },
    { type: 'withdrawCheckpoint', stage: 'checkpoint', scheduledEventId: 20, workflowTaskCompletedEventId: 19, scheduledAt: t(90), closedAt: t(95), attempt: 1, outcome: 'completed', compensation: true },
  ],
};
const rects = (svg: string, cls: string) => [...svg.matchAll(new RegExp(`<rect class="${cls}"[^>]* x="([\\d.]+)" y="\\d+" width="([\\d.]+)"`, 'g'))].map((m) => [Number(m[1]), Number(m[2])]);
// The plot runs from x = 190 over 750 px for 100 s: 7.5 px a second.
const px = (s: number) => 190 + s * 7.5;

test('a lane per stage; a row per job attempt split into queue wait and run time as the watch observed them', () => {
  const svg = timelineSvg(report);
  expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  for (const s of ['preprocess', 'train', 'checkpoint']) expect(svg).toContain(`>${s}</text>`);
  expect(svg).toContain('failed ×2');
  expect(svg.match(/<g class="attempt" data-stage="train"/g)).toHaveLength(2);
  // Attempt 1: queued from the watch's scheduling (11 s) to RUNNING first seen (20 s), ran to 50 s.
  expect(rects(svg, 'queue')).toEqual([[px(11), 9 * 7.5], [px(54), 0]]);
  expect(rects(svg, 'run')).toEqual([[px(20), 30 * 7.5], [px(54), 36 * 7.5]]);
  expect(svg).toContain('<title>queue wait 9.0 s (PENDING)</title>');
  expect(svg).toContain('<title>queue wait 0 ms (no queued state observed)</title>');
  expect(svg).toMatch(/<rect class="run" [^>]*fill="#e67e22"><title>running 30\.0 s, ended NODE_FAIL<\/title>/); // infrastructure
  expect(svg).toMatch(/<rect class="run" [^>]*fill="#c0392b"><title>running 36\.0 s, ended FAILED<\/title>/);
  // Every activity of the report is drawn once (submits and watches inside their attempt's row).
  expect(svg.match(/data-event="\d+"/g)).toHaveLength(report.activities.length);
  expect(svg).toContain('demo-&lt;1&gt;');
  expect(svg).not.toContain('<boom>');
  expect(svg).not.toContain('<down>');
});

test('failovers, fences and compensations are marked where they happened', () => {
  const marks = markers(report, jobAttempts(report));
  expect(marks.map((m) => [m.kind, m.at])).toEqual([
    ['failover', t(50).getTime()],
    ['fence', t(51).getTime()],
    ['compensation', t(90).getTime()],
  ]);
  expect(marks[0]!.label).toBe('train attempt 1: NODE_FAIL (node c1 & <down>) at zurich; failover to lugano');
  const svg = timelineSvg(report);
  expect(svg.match(/<g class="marker" data-kind="(\w+)"><line x1="([\d.]+)"/g)).toEqual([`<g class="marker" data-kind="failover"><line x1="${px(50).toFixed(1)}"`, `<g class="marker" data-kind="fence"><line x1="${px(51).toFixed(1)}"`, `<g class="marker" data-kind="compensation"><line x1="${px(90).toFixed(1)}"`]);
  expect(svg).toMatch(/class="activity compensation"[^>]*fill-opacity="0.5" stroke="#8e44ad"/);
});

test('a running run ends at now; a watch still going is drawn whole, not split', () => {
  const running: RunReport = { ...report, status: 'Running', closedAt: undefined, activities: report.activities.slice(0, 2).concat({ ...report.activities[2]!, closedAt: undefined, outcome: 'running', result: undefined }) };
  const svg = timelineSvg(running, t(200));
  expect(svg).toContain('+3.3 min');
  expect(svg).toContain('data-split="not-recorded"');
  expect(rects(svg, 'queue')).toEqual([]);
  expect(svg).toContain('still watching; its observations are recorded when it ends');
});

const recorded = (name: string) => analyseHistory(name, historyFromJSON(JSON.parse(readFileSync(new URL(`../../histories/${name}.json`, import.meta.url), 'utf8'))), defaultPayloadConverter);

test('a recorded failover: the attempt at zurich ended NODE_FAIL, was fenced, and the next ran at lugano; watches from before the split are drawn whole', () => {
  const r = recorded('hybridPipeline-failover');
  const attempts = jobAttempts(r);
  expect(attempts.map((a) => [a.stage, a.site, a.final?.state])).toEqual([['preprocess', 'local', 'COMPLETED'], ['train', 'zurich', 'NODE_FAIL'], ['train', 'lugano', 'COMPLETED']]);
  expect(markers(r, attempts).map((m) => m.kind)).toEqual(['failover', 'fence']);
  const svg = timelineSvg(r);
  expect(svg.match(/data-split="not-recorded"/g)).toHaveLength(3);
  expect(svg).toContain('queue wait and run time not recorded');
  expect(svg.match(/data-event="\d+"/g)).toHaveLength(r.activities.filter((a) => a.scheduledAt).length);
});

test('the deployment of recorded runs: a Kubernetes revision whose models gate failed and was rolled back; a local one that passed', () => {
  const k8s = deploymentView(recorded('hybridPipeline-kubernetes-gate-fails'));
  expect(k8s.revisions).toEqual([expect.objectContaining({ runtime: 'kubernetes', name: 'tandem/recorded-endpoint', generation: 2, replaces: '1', action: 'rolled out', rollout: 'rollout complete' })]);
  expect(k8s.gates.map((g) => [g.gate, g.result])).toEqual([['health', 'passed'], ['models', 'failed'], ['completion', 'not reached']]);
  expect(k8s.gates[1]!.detail).toBe('/v1/models answered 200 listing []');
  expect(k8s.undo).toEqual([expect.objectContaining({ what: 'rollback', outcome: 'completed', detail: 'rolled-back to revision 1, http://127.0.0.1:1 serving again' })]);
  const local = deploymentView(recorded('hybridPipeline-happy'));
  expect(local.revisions).toEqual([expect.objectContaining({ runtime: 'local', action: 'rolled out', rollout: 'serving' })]);
  expect(local.gates.map((g) => g.result)).toEqual(['passed', 'passed', 'passed']);
  const gateFails = deploymentView(recorded('hybridPipeline-deploy-gate-fails'));
  expect(gateFails.gates.map((g) => g.result)).toEqual(['passed', 'failed', 'not reached']);
  expect(gateFails.undo).toEqual([expect.objectContaining({ what: 'teardown', outcome: 'completed' })]);
});

test('a watch still going, with its last heartbeat: the job queued so far is drawn as queue wait up to now', () => {
  const running: RunReport = { ...report, status: 'Running', closedAt: undefined, activities: report.activities.slice(0, 2).concat({ ...report.activities[2]!, closedAt: undefined, outcome: 'running', result: undefined }) };
  const svg = timelineSvg(running, t(100), new Map([[12, [{ state: 'PENDING', at: t(12).getTime() }]]]));
  expect(svg).toContain('data-split="observed"');
  expect(rects(svg, 'queue')).toEqual([[px(11), 89 * 7.5]]);
  expect(rects(svg, 'run')).toEqual([]);
  expect(svg).toContain('<title>queue wait 89.0 s so far (PENDING)</title>');
});

test('what a watch observed: each state once, in order, with when it was first seen; carried over from the last heartbeat; bounded', () => {
  let now = 1000;
  const log = stateLog([{ state: 'PENDING', at: 10 }, { bogus: true }, 'RUNNING'], () => now);
  expect(log.list).toEqual([{ state: 'PENDING', at: 10 }]);
  log.note('PENDING');
  log.note('RUNNING');
  now = 2000;
  log.note('RUNNING');
  log.note('COMPLETED');
  expect(log.list).toEqual([{ state: 'PENDING', at: 10 }, { state: 'RUNNING', at: 1000 }, { state: 'COMPLETED', at: 2000 }]);
  const flapping = stateLog(undefined, () => now);
  for (let i = 0; i < 100; i++) flapping.note(i % 2 ? 'RUNNING' : 'PENDING');
  expect(flapping.list).toHaveLength(32);
});

test('the legend names every colour the chart uses, running apart from completed; a long failure is wrapped whole, never cut; long labels widen the left column', () => {
  const long = `stage train failed: ${'the site zurich stopped answering and every other site was unhealthy '.repeat(4)}END-OF-MESSAGE`;
  const svg = timelineSvg({ ...report, failure: long, activities: [...report.activities, { type: 'collectCheckpointFromAVeryFarAwaySiteWithALongName', stage: 'train', scheduledEventId: 30, workflowTaskCompletedEventId: 29, scheduledAt: t(60), closedAt: t(61), attempt: 12, outcome: 'completed', compensation: false }] });
  const legend = [...svg.matchAll(/<g class="legend-item" data-name="([^"]+)">/g)].map((m) => m[1]);
  expect(legend).toEqual(['queue wait', 'running', 'completed', 'failed', 'infrastructure end', 'cancelled', 'compensation', 'failover / retry', 'fence']);
  expect(svg).toMatch(/data-name="running"><rect [^>]*fill="#2e86c1"/);
  expect(svg).toMatch(/data-name="completed"><rect [^>]*fill="#4c9a2a"/);
  const title = /<text class="title"[^>]*>([\s\S]*?)<\/text>/.exec(svg)![1]!;
  const lines = [...title.matchAll(/<tspan[^>]*>([^<]*)<\/tspan>/g)].map((m) => m[1]!);
  expect(lines.length).toBeGreaterThan(2);
  expect(lines.join(' ')).toContain('END-OF-MESSAGE');
  for (const l of lines) expect(l.length).toBeLessThanOrEqual(128);
  // The bars start right of the longest label (11 px text, about 6.2 px a character).
  const label = 'collectCheckpointFromAVeryFarAwaySiteWithALongName (attempt 12)';
  const bar = /<rect class="activity" data-event="30" x="([\d.]+)"/.exec(svg)!;
  expect(Number(bar[1])).toBeGreaterThanOrEqual(20 + label.length * 6.2);
  // The legend's rows stay inside the picture.
  const height = Number(/height="(\d+(?:\.\d+)?)" font-family/.exec(svg)![1]);
  for (const m of svg.matchAll(/<g class="legend-item"[^>]*><rect x="([\d.]+)" y="([\d.]+)"/g)) expect(Number(m[2]) + 10).toBeLessThanOrEqual(height);
});
