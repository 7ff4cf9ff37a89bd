// A workflow interceptor bundled only into the replayer's bundle (workers/replay.ts), never into a
// worker's. Replaying a history whose last workflow task has no recorded completion (a running run's
// export, or a malformed one) compares no commands for that task, so an error the workflow code throws
// there (a TypeError on a malformed payload) would pass silently as "deterministic". The interceptor
// reports every such error through a sink the replayer calls during replay; failures the workflow
// means to raise (ApplicationFailure and the other Temporal failures, cancellation, continue-as-new)
// are not reported.
//
// It also holds back local activities the last, unrecorded task schedules: a replayer has no activities
// registered, and outside replay the SDK refuses to schedule an unregistered local activity (a
// ReferenceError that would fail a running run's replay although nothing diverged). The recorded tasks'
// local activities resolve from their markers as always.
import { ContinueAsNew, TemporalFailure, proxySinks, workflowInfo, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface ReplayProbeSinks extends Sinks {
  replayProbe: { threw(what: string, message: string): void };
}

const { replayProbe } = proxySinks<ReplayProbeSinks>();

function watch<T>(what: string, run: () => Promise<T>): Promise<T> {
  return run().catch((e: unknown) => {
    if (!(e instanceof TemporalFailure) && !(e instanceof ContinueAsNew)) {
      replayProbe.threw(what, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    }
    throw e;
  });
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      execute: (input, next) => watch('the workflow', () => next(input)),
      handleSignal: (input, next) => watch(`the handler of signal "${input.signalName}"`, () => next(input)),
      handleUpdate: (input, next) => watch(`the handler of update "${input.name}"`, () => next(input)),
    },
  ],
  outbound: [
    {
      // Past the recorded history: the run waits here, as it would for the local activity's result.
      scheduleLocalActivity: (input, next) => (workflowInfo().unsafe.isReplaying ? next(input) : new Promise<never>(() => undefined)),
    },
  ],
});
