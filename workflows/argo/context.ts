// The state one argoWorkflow run shares between its modules (Argo's workflowOperationContext): the
// spec's templates, the global scope, the node tree, the activities, and what signals deliver.
// Creating it registers the query and signal handlers, so it must happen before the first await.
import { condition, patched, proxyActivities, setHandler, workflowInfo, type ActivityInterfaceFor, type CancellationScope, type WorkflowInfo } from '@temporalio/workflow';
import type { createArgoActivities } from '../../activities/argo/index.js';
import { FAILURES } from '../../contract/failures.js';
import { TUNING_DEFAULTS } from '../../contract/tuning.js';
import type { Scope } from '../../argo/lang/tags.js';
import type { ArgoRunInput, ArgoStatus, Json } from '../../argo/lang/types.js';
import { ARGO_PATCHES, argoResumeSignal, argoStatusQuery, type ResumeRequest } from './api.js';
import { boundActivities, maxInFlight } from './in-flight.js';
import { lockGrantedSignal } from './lock.js';
import type { FanOut } from './fanout-plan.js';
import { arr, type Call, type NodeResult } from './model.js';
import { NodeTree, now } from './nodes.js';
import { globalScope, workflowArtifacts } from './scope.js';
import { grantKey } from './sync.js';

export type Activities = ReturnType<typeof createArgoActivities>;

// Spelled out, not NON_RETRYABLE_TYPES: the retry policy is recorded with every scheduled activity,
// and must not change when a pipeline failure type is added.
const NON_RETRYABLE = [FAILURES.RuntimeUnavailable.type, FAILURES.InvalidRequest.type, FAILURES.ArgoPodFailed.type];

/**
 * At most `limit` callers inside run() at once (0: no limit); `parallelism` of the spec or a template.
 * A free slot is taken synchronously and a waiter is handed the slot of the caller that releases it,
 * first come first served: `condition(() => used < limit)` followed by `used++` let every waiter whose
 * condition held in the same pass (or eagerly, in the same tick) enter at once.
 */
export class Semaphore {
  private used = 0;
  private readonly waiting: { granted: boolean }[] = [];
  constructor(
    private readonly limit: number,
    /** Whether this run uses the queue; runs recorded before it replay with the racy wait. */
    private readonly queued: () => boolean = () => true,
  ) {}
  get limited(): boolean {
    return this.limit > 0;
  }
  /** The limit (0: none). */
  get size(): number {
    return this.limit;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const queued = this.limit > 0 && this.queued();
    if (this.limit > 0 && !queued) {
      await condition(() => this.used < this.limit);
      this.used++;
    } else if (queued && this.used < this.limit && this.waiting.length === 0) this.used++;
    else if (queued) {
      const me = { granted: false };
      this.waiting.push(me);
      try {
        await condition(() => me.granted);
      } catch (e) {
        // Cancelled while waiting: leave the queue, or pass on a slot granted in the meantime.
        const i = this.waiting.indexOf(me);
        if (i >= 0) this.waiting.splice(i, 1);
        else this.release();
        throw e;
      }
    }
    // The same awaits as before the queue when there is no limit: an extra tick would reorder the
    // commands of parallel branches.
    try {
      return await fn();
    } finally {
      if (queued) this.release();
      else if (this.limit > 0) this.used--;
    }
  }
  private release(): void {
    const next = this.waiting.shift();
    if (next) next.granted = true;
    else this.used--;
  }
}

export interface RunContext {
  readonly input: ArgoRunInput;
  readonly info: WorkflowInfo;
  readonly status: ArgoStatus;
  readonly nodes: NodeTree;
  readonly templates: Map<string, Json>;
  /** `workflow.*`; templates' `globalName` outputs are added to it as they finish. */
  readonly global: Scope;
  readonly wfArtifacts: Record<string, Json>;
  readonly acts: ActivityInterfaceFor<Activities>;
  readonly workflowParallelism: Semaphore;
  /** Every resume signal received, in order: a suspend node takes the first one after it started. */
  readonly resumes: ResumeRequest[];
  /** Locks granted to this run, by grantKey(lock, holder key). */
  readonly granted: Set<string>;
  /** Daemon pods, cancelled when the main run ends. */
  readonly daemonScopes: CancellationScope[];
  /** Why the run was cancelled (stop signal or deadline): the message of the nodes it cancelled. */
  stopMessage?: string;
  /** Runs one template call; a slot so that steps and DAGs, which it runs in turn, need not import it. */
  runTemplate(call: Call): Promise<NodeResult>;
  semaphore(limit: number): Semaphore;
  /** Where large loops and composite calls go to child workflows (fanout.ts); absent: all run here. */
  fanOut?: FanOut;
  /** patched(ARGO_PATCHES[fix]) for the pure modules (steps, call, io…), which may not import @temporalio/workflow. */
  patched(fix: keyof typeof ARGO_PATCHES): boolean;
}

export function createContext(input: ArgoRunInput, runTemplate: (ctx: RunContext, call: Call) => Promise<NodeResult>, opts: { nodeIdPrefix?: string } = {}): RunContext {
  const { spec } = input;
  const info = workflowInfo();
  const templates = new Map(arr(spec.templates).map((t) => [String(t.name), t]));
  const status: ArgoStatus = { name: input.name, phase: 'Running', startedAt: now(), entrypoint: String(spec.entrypoint), nodes: {} };
  const nodes = new NodeTree(input.name, status, opts.nodeIdPrefix);
  const resumes: ResumeRequest[] = [];
  setHandler(argoStatusQuery, () => status);
  setHandler(argoResumeSignal, (r) => void resumes.push(r ?? {}));

  const proxied = proxyActivities<Activities>({
    startToCloseTimeout: '30 days',
    heartbeatTimeout: input.tuning?.heartbeatTimeoutMs ?? TUNING_DEFAULTS.heartbeatTimeoutMs,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE },
  });
  const acts = boundActivities(proxied, maxInFlight(input));

  // A run started by a Schedule (CronWorkflow) carries the time it was scheduled for.
  const scheduledStartTime = (info.searchAttributes?.TemporalScheduledStartTime as unknown[] | undefined)?.[0];
  const global = globalScope(input, { uid: info.runId, startedAt: status.startedAt, scheduledStartTime });
  const wfArtifacts = workflowArtifacts(spec);
  const queued = () => patched(ARGO_PATCHES.parallelism);
  const workflowParallelism = new Semaphore(Number(spec.parallelism ?? 0), queued);

  const granted = new Set<string>();
  setHandler(lockGrantedSignal, ({ lock, key }) => void granted.add(grantKey(lock, key)));

  const ctx: RunContext = {
    input,
    info,
    status,
    nodes,
    templates,
    global,
    wfArtifacts,
    acts,
    workflowParallelism,
    resumes,
    granted,
    daemonScopes: [],
    runTemplate: (call) => runTemplate(ctx, call),
    semaphore: (limit) => new Semaphore(limit, queued),
    patched: (fix) => patched(ARGO_PATCHES[fix]),
  };
  return ctx;
}
