// argoWorkflow: runs an Argo Workflow spec (templateRefs already inlined) on Temporal. Steps, DAGs,
// loops, conditions, retries, suspend, exit handlers and deadlines are interpreted in deterministic
// workflow code; every pod, HTTP call and resource is an activity. Each retry attempt is a fresh
// activity with its own deterministic job name, its backoff a durable timer.
//
// The run, as Argo's controller splits it: context.ts (the run's shared state), template.ts (one
// template call: memoize, retry, locks, body), steps.ts / dag.ts / call.ts / loops.ts, leaves.ts and
// pods.ts (activities and their inputs), io.ts (inputs and outputs), sync.ts / lock-client.ts (locks).
// This file is the run itself: workflow-level locks, the entrypoint, the deadline, the exit handler.
import { CancellationScope, isCancellation, patched, setHandler, sleep } from '@temporalio/workflow';
import { failure } from '../../contract/failures.js';
import { refuseUnreadableInput } from '../../contract/refused-payload.js';
import { substituteDeep } from '../../argo/lang/tags.js';
import type { ArgoRunInput, ArgoStatus, Json } from '../../argo/lang/types.js';
import { ARGO_PATCHES, argoStopSignal } from './api.js';
import { createContext } from './context.js';
import { attachFanOut } from './fanout.js';
import { acquireLocks, releaseLocks } from './lock-client.js';
import { activityMessage, exitTemplateName, failed, lifecycleHooks, UserError, type NodeResult } from './model.js';
import { now } from './nodes.js';
import { entryArguments, workflowFailures, workflowOutputs } from './scope.js';
import { holderKey, syncLocks, type LockRef } from './sync.js';
import { runTemplate } from './template.js';
import { Hooks } from './call.js';

export async function argoWorkflow(input: ArgoRunInput): Promise<ArgoStatus> {
  refuseUnreadableInput(input, 'argoWorkflow'); // contract/refused-payload.ts
  const { spec } = input;
  const ctx = createContext(input, runTemplate);
  attachFanOut(ctx, [input.name, `${input.name}.onExit`]);
  const { status, global } = ctx;

  const entry = ctx.templates.get(String(spec.entrypoint));
  if (!entry) throw failure('InvalidRequest', `entrypoint template "${String(spec.entrypoint)}" not found`);
  const mainScope = new CancellationScope();
  setHandler(argoStopSignal, (s) => {
    ctx.stopMessage = s?.message ?? 'Stopped by user';
    mainScope.cancel();
  });
  const deadlineMs = spec.activeDeadlineSeconds !== undefined ? Number(spec.activeDeadlineSeconds) * 1000 : undefined;
  let main: NodeResult | undefined;
  const entryArgs = entryArguments(spec, global);
  // Workflow-level synchronization: the whole run (exit handler included) holds the locks; it waits
  // Pending for them first. Runs recorded before locks existed replay without them.
  const wfSync = spec.synchronization as Json | undefined;
  const wfLockKey = holderKey(ctx.info);
  const hooks = lifecycleHooks(spec);
  const wfHooks = hooks.length > 0 && patched(ARGO_PATCHES.lifecycleHooks) ? new Hooks(ctx, hooks, undefined, input.name) : undefined;
  let wfHeld: LockRef[] = [];
  let wfLockError: string | undefined;
  const mainRun = mainScope.run(async () => {
    if (wfSync && patched(ARGO_PATCHES.sync)) {
      try {
        const locks = syncLocks(substituteDeep(wfSync, global), input.namespace ?? 'default');
        wfHeld = await acquireLocks(ctx, locks, wfLockKey, input.name, (msg) => {
          status.phase = msg ? 'Pending' : 'Running';
          if (msg) status.message = msg;
          else delete status.message;
        });
      } catch (e) {
        if (isCancellation(e)) throw e;
        wfLockError = e instanceof UserError ? e.message : activityMessage(e);
        return undefined;
      }
    }
    const ran = runTemplate(ctx, { template: entry, args: entryArgs, name: input.name, displayName: input.name });
    // Workflow-level hooks while it runs (workflow.status Running), under the root node.
    wfHooks?.fire('Running', global, status.nodes[input.name]);
    return ran;
  });
  try {
    if (deadlineMs !== undefined) {
      const timer = sleep(deadlineMs).then(() => {
        ctx.stopMessage = 'Max duration limit exceeded';
        mainScope.cancel();
      });
      void timer;
    }
    main = await mainRun;
  } catch (e) {
    if (!isCancellation(e)) throw e;
  }
  ctx.daemonScopes.forEach((d) => d.cancel());
  const root = status.nodes[input.name];
  status.phase = main ? main.phase : wfLockError !== undefined ? 'Error' : 'Failed';
  if (status.phase === 'Omitted' || status.phase === 'Skipped') status.phase = 'Succeeded';
  status.message = main ? (failed(main.phase) ? main.message : undefined) : (wfLockError ?? ctx.stopMessage);
  if (!main && root) {
    root.phase = 'Failed';
    root.message = ctx.stopMessage;
    root.finishedAt = now();
  }

  if (wfHooks) {
    // Once the run ended: the hooks whose expression now holds (workflow.status its phase), then
    // every hook is waited for before the exit handler, as Argo's operate() does.
    wfHooks.fire(status.phase, global, root ?? status.nodes[input.name]);
    await wfHooks.done();
  }
  // Inline, not a function of its own: without an exit handler the release signals are sent in this
  // same tick, ahead of the daemons' cancellations (queued as microtasks above), as runs recorded them.
  try {
    const exitName = exitTemplateName(spec);
    if (exitName) {
      global['workflow.status'] = status.phase;
      global['workflow.duration'] = String((Date.now() - Date.parse(status.startedAt)) / 1000);
      global['workflow.failures'] = workflowFailures(status);
      const t = ctx.templates.get(exitName);
      if (t) {
        const r = await runTemplate(ctx, { template: t, args: {}, name: `${input.name}.onExit`, displayName: `${input.name}.onExit` });
        if (failed(r.phase) && status.phase === 'Succeeded') {
          status.phase = r.phase;
          status.message = r.message;
        }
      }
    }
  } finally {
    // Released however the run ends (also when the exit handler is cancelled with the run).
    if (wfHeld.length) await releaseLocks(ctx, wfHeld, wfLockKey);
  }
  status.finishedAt = now();
  const outputs = workflowOutputs(global);
  if (outputs) status.outputs = outputs;
  return status;
}
