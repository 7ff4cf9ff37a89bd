import { rmSync } from 'node:fs';
import { closeGuard, describeLeftovers } from './lanes/process-guard.mjs';

export default async function globalTeardown() {
  await globalThis.__tandemServer?.stop();
  // What a suite started and did not stop: listed, ended (so nothing outlives the run) and failed.
  const left = await closeGuard(globalThis.__tandemGuard);
  if (process.env.TANDEM_TEST_DIR && !process.env.TANDEM_KEEP_TEST_DIR) rmSync(process.env.TANDEM_TEST_DIR, { recursive: true, force: true });
  if (left.length) throw new Error(`${left.length} process(es) started by the test suites were still running when the run ended (now killed):\n${describeLeftovers(left)}`);
}
