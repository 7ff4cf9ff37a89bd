// A cancel while deployModel is starting the model server (PATCHES.deploySaga): the undo is on the saga
// before the call and the call is not cancellable, so the run's compensation stops the server it was
// starting. Before the patch the run moved on at the cancel, with nothing on its saga yet, and the server
// outlived it. The real local runtime and model server; deployModel's return is held back after the
// server is up, which is the window a cancel can hit.
import { createActivities } from '../activities/index.js';
import type { DeployInput } from '../activities/types.js';
import { LocalServingBackend, stopModelServersUnder } from '../backends/local-serving.js';
import { spec, startWorker, tempDir, uniqueQueue } from './helpers.js';

test('cancelled during deployModel: the model server it started is torn down by the saga, nothing left serving', async () => {
  const home = tempDir('deploy-cancel');
  const real = createActivities({ home });
  let serverUp!: () => void;
  const up = new Promise<void>((r) => (serverUp = r));
  const activities = {
    ...real,
    async deployModel(input: DeployInput) {
      const d = await real.deployModel(input);
      serverUp();
      await new Promise((r) => setTimeout(r, 5000)); // the server serves; the activity has not returned yet
      return d;
    },
  };
  const w = await startWorker({ taskQueue: uniqueQueue('deploy-cancel'), home, activities });
  try {
    const h = await w.tandem.launch(spec({ name: 'deploy-cancel', stages: { train: { steps: 20, checkpointEvery: 10 } } }));
    await up;
    expect(new LocalServingBackend(home).list().filter((d) => d.alive)).toHaveLength(1);
    await h.cancel();
    await expect(h.result()).rejects.toThrow();
    const timeline = await h.timeline();
    const torn = timeline.filter((e) => e.kind === 'compensation' && /^tear down deployment /.test(e.message));
    expect(torn).toHaveLength(1);
    // Nothing of the run serves any more: the teardown found the server and stopped it.
    expect(new LocalServingBackend(home).list().filter((d) => d.alive)).toEqual([]);
    expect(await stopModelServersUnder(home)).toEqual([]);
  } finally {
    await w.stop();
  }
}, 240_000);
