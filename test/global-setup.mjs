// One real Temporal dev server (headless, SQLite) for the whole test run. Jest loads global setup
// outside its module mapper, so the TypeScript sources are imported through tsx.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { enterGuard } from './lanes/process-guard.mjs';

export default async function globalSetup() {
  // Before anything starts: every process of the run (workers, and all they start) lands in the
  // guard's cgroup, which the global teardown checks is empty.
  const guard = enterGuard('jest');
  if (guard.skipped) console.log(`tandem tests: leftover-process check off: ${guard.skipped}`);
  globalThis.__tandemGuard = guard;
  const { startDevServer } = await tsImport('../workers/dev-server.ts', import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'tandem-test-'));
  const server = await startDevServer({ dbFile: join(dir, 'temporal.db'), log: (l) => console.log(l), startTimeoutMs: 90_000 });
  process.env.TANDEM_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.TANDEM_TEST_DIR = dir;
  globalThis.__tandemServer = server;
}
