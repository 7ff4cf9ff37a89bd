// Long waits cannot starve short work (workers/slots.ts), on the real dev server: a worker with two
// short activity slots keeps starting pipelines while more train jobs than that are being watched.
// With one pool, the first two watches took both slots and no other pipeline's submit ever ran.
import { fakeActivities } from './fake-activities.js';
import { spec, startWorker, uniqueQueue, waitFor } from './helpers.js';

test('with every short slot once held by a watch, four pipelines on a 2-slot worker all reach training', async () => {
  const fake = fakeActivities({ blockOn: 'train' });
  const w = await startWorker({ taskQueue: uniqueQueue('slots'), activities: fake.acts, slots: { maxActivities: 2, maxWatches: 10 } });
  const handles = [];
  try {
    for (let i = 0; i < 4; i++) handles.push(await w.tandem.launch(spec(), { id: `slots-${i}-${Date.now()}`, tuning: { heartbeatTimeoutMs: 5000 } }));
    const watching = () => fake.calls.filter((c) => c.startsWith('awaitJob:') && c.includes('-train-'));
    // Generous: each pipeline's two short stages take well under a second here.
    await waitFor('four train watches at once', () => watching().length === 4, 60_000);
    expect(new Set(watching()).size).toBe(4);
    // And each one's preprocess ran on the short slots meanwhile: placed, submitted, watched to its end.
    expect(fake.calls.filter((c) => c.startsWith('submitJob:'))).toHaveLength(8);
  } finally {
    for (const h of handles) await h.cancel().catch(() => undefined);
    for (const h of handles) await h.result().catch(() => undefined);
    await w.stop();
  }
});
