// The pipeline's side of Phase 2 routing, on a real Temporal server with scripted activities (the
// site's routing and the job submissions are fakes; routing.long.test.ts runs it on real Slurm): the
// decision recorded in status, timeline and search attribute, and a run routed to Tandem's pool that
// goes back to the legacy partition once its site has fallen back.
import type { Routing } from '../../contract/routing.js';
import { SA_POOL } from '../../contract/search-attributes.js';
import { fakeActivities } from '../fake-activities.js';
import { spec, startWorker, uniqueQueue } from '../helpers.js';

const pools = { tandem: 'tandem', legacy: 'batch' };

test('routed to Tandem at 100%; after the site falls back the next job goes to the legacy partition', async () => {
  const fake = fakeActivities();
  const routings: Routing[] = [{ percent: 100, policies: [], pools }, { percent: 0, policies: [] }];
  const partitions: (string | undefined)[] = [];
  const acts = {
    ...fake.acts,
    async siteRouting() {
      return { site: 'zurich', routing: routings.shift() ?? { percent: 0, policies: [] } };
    },
    async submitJob(input: Parameters<typeof fake.acts.submitJob>[0]) {
      partitions.push(input.resources.partition);
      return fake.acts.submitJob(input);
    },
  };
  const w = await startWorker({ taskQueue: uniqueQueue('route-wf'), activities: acts });
  try {
    const h = await w.tandem.launch(spec({ stages: { preprocess: { runtime: 'slurm' }, train: { runtime: 'slurm' }, deploy: { runtime: 'local' } } }), { id: uniqueQueue('route-wf') });
    await h.result();
    expect(partitions).toEqual(['tandem', 'batch']);
    const routing = (await h.timeline()).filter((e) => e.kind === 'routing');
    expect(routing.map((e) => [e.stage, e.site, e.message])).toEqual([
      ['preprocess', 'zurich', expect.stringMatching(/^routed to Tandem's pool \(partition tandem\) at migrating site zurich: bucket \d+\.\d\d < share 100%$/)],
      ['train', 'zurich', 'routed to the legacy pool (partition batch) at migrating site zurich: the site routes nothing through Tandem any more (fallen back or rolled back)'],
    ]);
    expect((await h.status()).routing).toMatchObject({ site: 'zurich', pool: 'legacy', partition: 'batch' });
    expect((await h.workflow.describe()).typedSearchAttributes.get(SA_POOL)).toBe('legacy');
  } finally {
    await w.stop();
  }
});

test('a partition the spec names is kept, and a site that is not migrating leaves the job as it was', async () => {
  const fake = fakeActivities({ siteRouting: { site: 'zurich', routing: { percent: 0, policies: [] } } });
  const partitions: (string | undefined)[] = [];
  const acts = { ...fake.acts, async submitJob(input: Parameters<typeof fake.acts.submitJob>[0]) { partitions.push(input.resources.partition); return fake.acts.submitJob(input); } };
  const w = await startWorker({ taskQueue: uniqueQueue('route-wf'), activities: acts });
  try {
    const h = await w.tandem.launch(spec({ stages: { preprocess: { runtime: 'slurm', resources: { partition: 'gpu' } }, train: { runtime: 'slurm' }, deploy: { runtime: 'local' } } }), { id: uniqueQueue('route-wf') });
    await h.result();
    expect(partitions).toEqual(['gpu', undefined]);
    expect((await h.timeline()).some((e) => e.kind === 'routing')).toBe(false);
    expect((await h.status()).routing).toBeUndefined();
  } finally {
    await w.stop();
  }
});
