// The executor plugin's answers when Argo cannot learn something from the protocol: Temporal
// unreachable (Running with a requeue, within a limit, instead of a 503 the agent gives up on after ≈ 31 s)
// and a stopped or deleted Argo workflow (its runs cancelled: argo/executor-plugin/watch.ts). Real
// Argo doing both: test/argo-real/executor-plugin.cp.test.ts.
import { executeState, executeTemplate, TransientError, type PluginRuns } from '../../../argo/executor-plugin/server.js';
import { whyCancel, WorkflowWatch, type ArgoWorkflowState, type TrackedNode } from '../../../argo/executor-plugin/watch.js';
import type { RunObservation } from '../../../argo/executor-plugin/protocol.js';

const body = {
  workflow: { metadata: { name: 'wf', namespace: 'argo', uid: 'u-1' } },
  template: { name: 'train', inputs: { parameters: [{ name: 'steps', value: '20' }] }, plugin: { tandem: { requeue: '2s', pipeline: 'name: p\nstages:\n  train: { runtime: local, steps: 20 }\n' } } },
};

function runs(over: Partial<PluginRuns> = {}): PluginRuns {
  const down = () => Promise.reject(new TransientError('connect ECONNREFUSED 127.0.0.1:7233'));
  return { ensure: down, observe: down, cancel: down, ...over };
}

describe('Temporal unreachable', () => {
  test('the node stays Running with a requeue and says why, until the limit; then it is Failed', async () => {
    let now = 1_000_000;
    const state = { ...executeState(120_000), now: () => now };
    const first = await executeTemplate(body, runs(), state);
    expect(first.status).toBe(200);
    expect(first.reply).toEqual({
      node: { phase: 'Running', message: expect.stringMatching(/^Tandem run argo-wf-train-\w+: Temporal is not reachable: connect ECONNREFUSED 127\.0\.0\.1:7233 \(for 0s; the node fails after 2m\); asking again in 2s$/) },
      requeue: '2s',
    });
    now += 90_000;
    expect((await executeTemplate(body, runs(), state)).reply).toMatchObject({ node: { phase: 'Running', message: expect.stringContaining('(for 1m30s; the node fails after 2m)') }, requeue: '2s' });
    now += 30_000;
    const last = await executeTemplate(body, runs(), state);
    expect(last.reply).toEqual({ node: { phase: 'Failed', message: expect.stringMatching(/Temporal is not reachable: .* \(for 2m, over the plugin's limit of 2m\)$/) } });
    expect(state.outages.size).toBe(0);
  });

  test('an answer in between starts the clock again', async () => {
    let now = 0;
    let up = false;
    const obs: RunObservation = { workflowId: 'x', execution: 'RUNNING', queryError: 'no poller' };
    const flaky = runs({ ensure: () => (up ? Promise.resolve() : Promise.reject(new TransientError('down'))), observe: () => Promise.resolve(obs) });
    const state = { ...executeState(60_000), now: () => now };
    await executeTemplate(body, flaky, state);
    now = 50_000;
    up = true;
    expect((await executeTemplate(body, flaky, state)).reply).toMatchObject({ node: { phase: 'Pending' } });
    up = false;
    now = 100_000;
    expect((await executeTemplate(body, flaky, state)).reply).toMatchObject({ node: { phase: 'Running', message: expect.stringContaining('(for 0s;') } });
  });
});

const tracked: TrackedNode = { namespace: 'argo', workflow: 'wf', uid: 'u-1', template: 'train', inputs: [{ name: 'steps', value: '20' }] };
const wf = (over: Partial<ArgoWorkflowState> = {}, phase = 'Running', message = 'Tandem run x: stage train running'): ArgoWorkflowState => ({
  uid: 'u-1',
  phase: 'Running',
  nodes: [
    { name: 'wf', type: 'Steps', phase: 'Running' },
    { name: 'wf[0].train', displayName: 'train', type: 'Plugin', templateName: 'train', phase, message, inputs: { parameters: [{ name: 'steps', value: '20' }] } },
  ],
  ...over,
});

describe('whyCancel', () => {
  test('a running node, or a node Argo still runs during a Stop (an exit handler), is left alone', () => {
    expect(whyCancel(tracked, wf())).toBeUndefined();
    expect(whyCancel(tracked, wf({ shutdown: 'Stop' }))).toBeUndefined();
  });

  test('deleted, or deleted and created again under the same name: cancel', () => {
    expect(whyCancel(tracked, undefined)).toBe('the Argo workflow argo/wf was deleted');
    expect(whyCancel(tracked, wf({ uid: 'u-2' }))).toMatch(/deleted \(one of the same name has another uid\)/);
  });

  test('stopped or terminated, past its deadline: Argo ended the node, cancel', () => {
    expect(whyCancel(tracked, wf({ shutdown: 'Terminate', phase: 'Failed' }, 'Failed', "Stopped with strategy 'Terminate'"))).toBe("Argo ended node train of argo/wf (Failed: Stopped with strategy 'Terminate')");
  });

  test('a loop: only the node with these inputs counts', () => {
    const other = wf();
    other.nodes[1]!.inputs = { parameters: [{ name: 'steps', value: '40' }] };
    other.nodes[1]!.phase = 'Failed';
    expect(whyCancel(tracked, { ...other, shutdown: undefined, phase: 'Running' })).toBeUndefined();
  });

  test('the workflow finished with the node still Running (past its deadline): cancel', () => {
    expect(whyCancel(tracked, wf({ phase: 'Failed' }))).toBe('the Argo workflow argo/wf ended (Failed) before the Tandem run');
  });

  test('no node of the template (a templateRef): the workflow decides', () => {
    expect(whyCancel({ ...tracked, template: 'elsewhere' }, wf({ shutdown: 'Stop' }))).toBe('the Argo workflow argo/wf was stopped (spec.shutdown: Stop)');
    expect(whyCancel({ ...tracked, template: 'elsewhere' }, wf({ phase: 'Failed' }))).toBe('the Argo workflow argo/wf ended (Failed) before the Tandem run');
  });
});

describe('WorkflowWatch', () => {
  test('cancels each run whose workflow is gone, once; a failed read or cancel is tried again', async () => {
    const cancelled: string[] = [];
    let readFails = true;
    let cancelFails = true;
    const watch = new WorkflowWatch({
      everyMs: 1000,
      read: async (_ns, name) => {
        if (name === 'flaky' && readFails) throw new Error('apiserver down');
        return name === 'alive' ? wf() : undefined;
      },
      cancel: async (id) => {
        if (id === 'run-c' && cancelFails) throw new Error('temporal down');
        cancelled.push(id);
      },
    });
    watch.track('run-a', { ...tracked, workflow: 'alive' });
    watch.track('run-b', { ...tracked, workflow: 'flaky' });
    watch.track('run-c', { ...tracked, workflow: 'gone' });
    await watch.check();
    expect(cancelled).toEqual([]);
    expect(watch.size).toBe(3);
    readFails = false;
    cancelFails = false;
    await watch.check();
    expect(cancelled.sort()).toEqual(['run-b', 'run-c']);
    await watch.check();
    expect(cancelled.sort()).toEqual(['run-b', 'run-c']);
    expect(watch.size).toBe(1);
    watch.untrack('run-a');
    expect(watch.size).toBe(0);
  });
});
