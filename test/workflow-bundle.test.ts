// The workflow bundle is built in a child process (workers/bundle.ts): what it sends back is the
// bundle, and a bundler failure reaches the caller as a clear error, not a hang or a dead worker.
import { bundleInChild } from '../workers/bundle.js';
import { WORKFLOWS_PATH } from '../workers/worker.js';

test('a workflows path that does not exist is the bundler\'s error, said once', async () => {
  await expect(bundleInChild({ workflowsPath: '/nonexistent/tandem-workflows/index.ts' })).rejects.toThrow(/^bundling the workflow code failed: .*nonexistent/);
});

test('the child sends the whole bundle: the workflows it exports are in its code', async () => {
  const { code } = await bundleInChild({ workflowsPath: WORKFLOWS_PATH });
  // The workflow types a worker registers, from workflows/index.ts.
  for (const type of ['hybridPipeline', 'argoWorkflow', 'argoSlice']) expect(code).toContain(type);
  expect(code.length).toBeGreaterThan(1_000_000);
}, 120_000);
