// `tandem runs show --svg`: the picture has a lane per stage and a bar per activity attempt, placed
// on the run's time axis, failures and compensations told apart, and text escaped.
import { timelineSvg } from '../../../cli/timeline-svg.js';
import type { RunReport } from '../../../sdk/history.js';

const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, s));
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
    { type: 'submitJob', stage: 'preprocess', scheduledEventId: 5, workflowTaskCompletedEventId: 4, scheduledAt: t(0), closedAt: t(1), attempt: 1, outcome: 'completed', compensation: false },
    { type: 'awaitJob', stage: 'train', scheduledEventId: 9, workflowTaskCompletedEventId: 8, scheduledAt: t(10), closedAt: t(50), attempt: 1, outcome: 'failed', error: 'exit 3 & <boom>', compensation: false },
    { type: 'awaitJob', stage: 'train', scheduledEventId: 12, workflowTaskCompletedEventId: 11, scheduledAt: t(50), closedAt: t(90), attempt: 2, outcome: 'failed', compensation: false },
    { type: 'withdrawCheckpoint', stage: 'checkpoint', scheduledEventId: 15, workflowTaskCompletedEventId: 14, scheduledAt: t(90), closedAt: t(95), attempt: 1, outcome: 'completed', compensation: true },
  ],
};

test('a lane per stage, a bar per activity, on the time axis', () => {
  const svg = timelineSvg(report);
  expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  expect(svg.match(/<rect /g)).toHaveLength(1 + 3 + 4); // background, 3 stages, 4 activities
  for (const s of ['preprocess', 'train', 'checkpoint']) expect(svg).toContain(`>${s}</text>`);
  expect(svg).toContain('failed ×2');
  // The failed await starts at 10 s of 100 s: at LEFT + 10% of the plot width (190 + 75).
  expect(svg).toMatch(/<rect x="265\.0" y="\d+" width="300\.0" height="12" fill="#c0392b"><title>awaitJob: failed, 40\.0 s — exit 3 &amp; &lt;boom&gt;<\/title>/);
  expect(svg).toMatch(/fill-opacity="0.5" stroke="#8e44ad"/); // the compensation
  expect(svg).toContain('demo-&lt;1&gt;');
  expect(svg).not.toContain('<boom>');
});

test('a running run ends at now', () => {
  const running = { ...report, status: 'Running', closedAt: undefined, stages: [{ ...report.stages[1]!, status: 'running' as const, finishedAt: undefined }] };
  expect(timelineSvg(running, t(200))).toContain('+3.3 min');
});
