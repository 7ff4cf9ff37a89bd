// Argo's Slurm steps on a real Slurm cluster: a `plugin: { slurm: … }` template becomes a batch job
// through slurmrestd, its resources from the template, its stdout the step's result.
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { prepare } from '../../argo/client.js';
import { ArgoClient } from '../../argo/client.js';
import { startCluster, type Cluster } from './cluster.js';
import { address, startWorker, tempDir, uniqueQueue } from '../helpers.js';
import { slurmMinutes } from '../../activities/argo/slurm.js';

let cluster: Cluster;
let w: Awaited<ReturnType<typeof startWorker>>;
let argo: ArgoClient;

beforeAll(async () => {
  cluster = await startCluster('argo');
  const slurm = new SlurmrestdJobBackend({ site: 'argo', workDir: cluster.workDir, statusIntervalMs: 250, rest: { socketPath: cluster.restSocket } });
  const taskQueue = uniqueQueue('argo-slurm');
  w = await startWorker({ taskQueue, home: tempDir('argo-slurm'), backends: { slurm } });
  argo = await ArgoClient.connect({ address: address(), taskQueue });
}, 120_000);
afterAll(async () => {
  await argo?.close();
  await w?.stop();
  await cluster?.down();
});

const workflow = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: slurm-step-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: simulate
        template: md
    - - name: report
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.simulate.outputs.result}}"}]}
  - name: md
    plugin:
      slurm:
        nodes: 1
        tasksPerNode: 2
        walltime: "5"
        script: |
          #!/bin/bash
          #SBATCH --cpus-per-task=1
          echo "job $SLURM_JOB_ID ntasks=$SLURM_NTASKS"
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "got: {{inputs.parameters.msg}}"'}
`;

test('a plugin.slurm step runs as a Slurm job and its stdout feeds the next step', async () => {
  const { id } = await argo.submit(prepare('slurm.yaml', { text: workflow }));
  const st = await argo.wait(id);
  expect(st.phase).toBe('Succeeded');
  const sim = Object.values(st.nodes).find((n) => n.displayName === 'simulate')!;
  expect(sim.target).toMatch(/^slurm:argo:\d+$/);
  const jobId = sim.target!.split(':')[2]!;
  // scontrol confirms the template's resources reached Slurm.
  const job = await cluster.cli('scontrol', ['show', 'job', '-o', jobId]);
  expect(job).toMatch(/NumTasks=2 /);
  expect(job).toMatch(/TimeLimit=00:05:00/);
  expect(sim.outputs?.result).toBe(`job ${jobId} ntasks=2`);
  const report = Object.values(st.nodes).find((n) => n.displayName === 'report')!;
  expect(report.outputs?.result).toBe(`got: job ${jobId} ntasks=2`);
});

test('Slurm time formats', () => {
  expect(slurmMinutes('5')).toBe(300_000);
  expect(slurmMinutes('1:30')).toBe(90_000);
  expect(slurmMinutes('01:00:00')).toBe(3_600_000);
  expect(slurmMinutes('1-00:00:00')).toBe(86_400_000);
  expect(slurmMinutes('1h')).toBeUndefined();
});
