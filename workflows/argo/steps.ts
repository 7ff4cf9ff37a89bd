// A `steps` template: its groups run one after another, the steps of a group in parallel; the first
// failed step (unless continueOn) fails the group and ends the template. With `failFast: true` no step
// or loop item starts after one failed. Its daemon steps are stopped when it ends.
import type { CancellationScope } from '@temporalio/workflow';
import type { Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, Phase } from '../../argo/lang/types.js';
import { runCall } from './call.js';
import type { RunContext } from './context.js';
import { publish, templateOutputs } from './io.js';
import { arr, continueOn, emptyOutputs, FAIL_FAST_MESSAGE, failed, UserError, type FailFastGate, type NodeResult } from './model.js';
import { finish } from './nodes.js';

export async function runSteps(ctx: RunContext, tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
  const local: Scope = { ...scope };
  const parallel = tmpl.parallelism !== undefined ? ctx.semaphore(Number(tmpl.parallelism)) : undefined;
  const groups = Array.isArray(tmpl.steps) ? (tmpl.steps as unknown[]) : [];
  // Filled by the daemon pods of this template's steps (runPod), cancelled when it ends.
  const daemons: CancellationScope[] = [];
  const gate: FailFastGate | undefined = tmpl.failFast === true && ctx.patched('templateFailFast') ? { tripped: false } : undefined;
  // Argo's names and shape (ARGO_PATCHES.loopNodes): a step is `<steps>[<i>].<step>`, its loop items
  // hang from the step group, and the template fails with its step group's message.
  const argo = ctx.patched('loopNodes');
  let outcome: { phase: Phase; message?: string } = { phase: 'Succeeded' };
  try {
    for (let gi = 0; gi < groups.length; gi++) {
      const group = arr(groups[gi]);
      const g = ctx.nodes.add({ name: `${node.name}[${gi}]`, displayName: `[${gi}]`, type: 'StepGroup', parentId: node.id });
      const prefix = argo ? g.name : node.name;
      const results = await Promise.all(
        group.map(async (step) => {
          try {
            return await runCall(ctx, step, local, g.id, prefix, parallel, { daemons, gate, flatLoop: argo });
          } catch (e) {
            if (!(e instanceof UserError)) throw e;
            if (gate) gate.tripped = true;
            const n = ctx.nodes.add({ name: `${prefix}.${String(step.name)}`, displayName: String(step.name), type: 'Pod', parentId: g.id });
            return finish(n, 'Error', e.message);
          }
        }),
      );
      group.forEach((step, i) => {
        const r = results[i];
        if (r) publish(local, `steps.${String(step.name)}`, r, ctx.status.nodes[r.id]);
      });
      if (gate?.tripped) {
        finish(g, 'Failed', FAIL_FAST_MESSAGE);
        outcome = { phase: 'Failed', message: FAIL_FAST_MESSAGE };
        break;
      }
      const bad = group.map((s, i) => [s, results[i]] as const).find((e): e is readonly [Json, NodeResult] => !!e[1] && failed(e[1].phase) && !continueOn(e[0], e[1].phase));
      // Argo marks the group and the template Failed (an Errored child too): executeStepGroup, executeSteps.
      finish(g, bad ? (argo ? 'Failed' : bad[1].phase) : 'Succeeded', bad ? `child '${bad[1].id}' failed` : undefined);
      if (bad) {
        outcome = argo ? { phase: 'Failed', message: `child '${bad[1].id}' failed` } : { phase: bad[1].phase, message: bad[1].message ?? `child '${bad[1].id}' failed` };
        break;
      }
    }
  } finally {
    daemons.forEach((d) => d.cancel());
  }
  return finish(node, outcome.phase, outcome.message, failed(outcome.phase) ? undefined : templateOutputs(tmpl, local, emptyOutputs(), ctx.global));
}
