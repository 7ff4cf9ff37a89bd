// The placement activity: live local inventory, pluggable sources, unavailable sources reported.
import { createPlacementActivities, localMachineSource, type InventorySource } from '../../activities/placement.js';
import { availableParallelism } from 'node:os';

const job = (over = {}) => ({ id: 'stage-train', type: 'ai-training' as const, tenant: 'a', qos: 'silver' as const, priority: 100, submit: 0, count: 1, per: { cpus: 1, gpus: 0, memoryMB: 64 }, walltime: 600, ...over });

describe('placement activity', () => {
  test('the local machine is gathered from node:os and a small job starts there', async () => {
    const { sites } = await localMachineSource().gather();
    expect(sites[0].clusters[0].partitions[0].nodes[0].cpus).toBe(availableParallelism());
    const { placeJob } = createPlacementActivities();
    const { decision, unavailable } = await placeJob({ job: job() });
    expect(unavailable).toEqual([]);
    // Busy cores (load average) count as used, so on a loaded host the job is reserved rather than started.
    expect(['start', 'reserve']).toContain(decision.kind);
    expect(decision).toMatchObject({ placement: { site: 'local', nodes: [{ slots: 1, cpus: 1 }] } });
  });

  test('a job larger than every gathered site is rejected with the reason; a failing source is reported, not fatal', async () => {
    const gpuSite: InventorySource = {
      name: 'slurm-lugano',
      gather: async () => ({ sites: [{ name: 'lugano', clusters: [{ name: 'daint', partitions: [{ name: 'gpu', nodes: [{ id: 'nid001', cpus: 72, gpus: 4, gpuModel: 'GH200', memoryMB: 400_000, nvlinkDomain: 'nid001' }] }] }] }], running: [] }),
    };
    const broken: InventorySource = { name: 'k8s', gather: async () => { throw new Error('connect ECONNREFUSED'); } };
    const { placeJob } = createPlacementActivities([localMachineSource(), gpuSite, broken]);
    const gpuJob = await placeJob({ job: job({ count: 4, per: { cpus: 8, gpus: 1, memoryMB: 1000 }, needsNvlink: true }) });
    expect(gpuJob.unavailable).toEqual([{ source: 'k8s', error: 'connect ECONNREFUSED' }]);
    expect(gpuJob.decision).toMatchObject({ kind: 'start', placement: { site: 'lugano', nvlinkDomains: 1 } });
    const huge = await placeJob({ job: job({ count: 64, per: { cpus: 8, gpus: 1, memoryMB: 1000 } }) });
    expect(huge.decision).toMatchObject({ kind: 'reject', reason: 'too-large' });
  });
});
