// What the running pipeline was started with, read by activities from its first history event. The
// SDK checks a launch before it starts, but anyone with access to the namespace can start
// `hybridPipeline` with an input of their own; the worker-side checks (tenant policy, run ownership)
// therefore look at the input the workflow really runs. One read of history per run, cached.
import { Context } from '@temporalio/activity';
import type { Payload } from '@temporalio/common';
import type { PipelineSpec } from '../contract/pipeline.js';

export interface StartInput {
  spec: PipelineSpec;
  tuning?: { failover?: { sites?: string[] } };
  resume?: { from: string; runKey: string };
}

/** The workflow type whose runs these checks cover (workflows/pipeline.ts). */
const PIPELINE = 'hybridPipeline';
/** Start inputs kept (per run id): one read of history per run, not per activity. */
const CACHED_RUNS = 512;

export class RunInputs {
  private readonly inputs = new Map<string, Promise<StartInput | undefined>>();

  /** The current activity's run input (undefined outside a pipeline run, e.g. a test harness). */
  current(): Promise<StartInput | undefined> {
    let ctx: Context;
    try {
      ctx = Context.current();
    } catch {
      return Promise.resolve(undefined);
    }
    const run = ctx.info.workflowExecution;
    if (!run || ctx.info.workflowType !== PIPELINE) return Promise.resolve(undefined);
    let input = this.inputs.get(run.runId);
    if (!input) {
      input = readStartInput(ctx, run);
      // A failed read is not remembered: the activity's retry reads again.
      input.catch(() => this.inputs.delete(run.runId));
      this.inputs.set(run.runId, input);
      if (this.inputs.size > CACHED_RUNS) this.inputs.delete(this.inputs.keys().next().value!);
    }
    return input;
  }
}

/**
 * The run's first history event holds its input: the spec the workflow runs, whoever started it.
 * Decoded with the worker client's converter, so an encrypted history (codec/) reads the same.
 */
async function readStartInput(ctx: Context, run: { workflowId: string; runId: string }): Promise<StartInput | undefined> {
  const { client } = ctx;
  const res = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: run, maximumPageSize: 1 });
  const payloads = res.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  if (!payloads?.length) return undefined;
  const { payloadConverter, payloadCodecs } = client.options.loadedDataConverter;
  let decoded = payloads as Payload[];
  for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  const input = payloadConverter.fromPayload<StartInput>(decoded[0]!);
  return input?.spec ? input : undefined;
}
