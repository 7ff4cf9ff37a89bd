// Workflows for bench/overhead.ts: Tandem's pipeline and a bare baseline, in one bundle.
import { proxyActivities } from '@temporalio/workflow';

export { hybridPipeline } from '../workflows/pipeline.js';

const { noop } = proxyActivities<{ noop(i: number): Promise<number> }>({ startToCloseTimeout: '1m' });

/** The baseline: the same number of sequential no-op activities with nothing around them. */
export async function bareActivities(count: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += await noop(i);
  return sum;
}
