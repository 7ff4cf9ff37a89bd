// Phase 2 routing's pure parts: the per-pipeline bucket, the pool it gives at a share, and which Slurm
// jobs the SLO gate counts as routed pipeline jobs.
import { decideRoute, isPipelineJobName, routingBucket } from '../../../contract/routing.js';
import { jobName, lineageJobName } from '../../../workflows/pipeline/identity.js';

const pools = { tandem: 'tandem', legacy: 'batch' };
const ids = Array.from({ length: 10_000 }, (_, i) => `pipeline-${i}`);

test('the bucket is fixed per workflow id and lies in [0, 100)', () => {
  for (const id of ids.slice(0, 200)) {
    const b = routingBucket(id);
    expect(b).toBeGreaterThanOrEqual(0);
    expect(b).toBeLessThan(100);
    expect(routingBucket(id)).toBe(b);
  }
});

test.each([10, 25, 50, 90])('at %i%% the share of 10 000 pipelines on Tandem is within 1.5 points of it', (percent) => {
  const tandem = ids.filter((id) => decideRoute(id, 'zurich', { percent, policies: [], pools }).pool === 'tandem').length;
  expect(Math.abs((tandem / ids.length) * 100 - percent)).toBeLessThan(1.5);
});

test('raising the share only adds pipelines to Tandem: none routed there moves back', () => {
  const at = (percent: number) => new Set(ids.filter((id) => decideRoute(id, 'zurich', { percent, policies: [], pools }).pool === 'tandem'));
  const [a, b] = [at(25), at(50)];
  for (const id of a) expect(b.has(id)).toBe(true);
});

test('0% and 100% route everything one way, with the partition and the reason', () => {
  expect(decideRoute('x', 'zurich', { percent: 100, policies: [], pools })).toMatchObject({ pool: 'tandem', partition: 'tandem', site: 'zurich', percent: 100, reason: expect.stringMatching(/^bucket \d+\.\d\d < share 100%$/) });
  expect(decideRoute('x', 'zurich', { percent: 0, policies: [], pools })).toMatchObject({ pool: 'legacy', partition: 'batch', reason: expect.stringMatching(/≥ share 0%$/) });
});

test("the SLO gate counts Tandem's pipeline jobs only", () => {
  expect(isPipelineJobName(jobName('route-25-3', 'train', 1))).toBe(true);
  expect(isPipelineJobName(lineageJobName({ workflowId: 'route-25-3', runId: 'r' }, 'preprocess', 2))).toBe(true);
  expect(isPipelineJobName('tandem-mig-mig-full-1-tandem-cpu')).toBe(false); // the gate's own benchmarks
  expect(isPipelineJobName('tandem-slo-breach-0')).toBe(false);
  expect(isPipelineJobName('wrf-train-1')).toBe(false); // somebody else's
});
