// Stopping or deleting an Argo workflow cancels the Tandem runs its plugin nodes started. The executor
// plugin protocol has no cancel: once a workflow is stopped (`argo stop`/`terminate`: spec.shutdown),
// deleted, or past its deadline, Argo marks its plugin nodes Failed, deletes the agent pod and never
// calls the plugin again, so a run it started would go on training and serving. The plugin server
// therefore reads, for every run it reported as not final, the Argo workflow from the apiserver (the
// sidecar's own service account, templates/argo/executor-plugin/rbac.yaml: `get` on workflows) and
// cancels the run — compensations run as for `tandem cancel` — when the workflow is gone or has a new
// uid, has finished, or every node of this template is finished in Argo while the run still runs. The decision
// is `whyCancel` (pure, unit-tested); `WorkflowWatch` polls; `kubeWorkflowReader` is the apiserver side.
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

/** The fields of an Argo Workflow the decision reads. */
export interface ArgoWorkflowState {
  uid: string;
  shutdown?: string;
  phase?: string;
  nodes: { name?: string; displayName?: string; type?: string; templateName?: string; phase?: string; message?: string; inputs?: { parameters?: { name: string; value?: string }[] } }[];
}

/** The workflow, or undefined when the apiserver has none of that name (deleted). */
export type ReadWorkflow = (namespace: string, name: string) => Promise<ArgoWorkflowState | undefined>;

/** What the server knows of a run's Argo node: the workflow's identity and the node's template. */
export interface TrackedNode {
  namespace: string;
  workflow: string;
  uid?: string;
  template?: string;
  inputs: { name: string; value?: string }[];
}

const FINISHED_NODE = new Set(['Succeeded', 'Failed', 'Error', 'Skipped', 'Omitted']);
const FINISHED_WORKFLOW = new Set(['Succeeded', 'Failed', 'Error']);

const sameInputs = (a: { name: string; value?: string }[], b: { name: string; value?: string }[] = []) =>
  a.length === b.length && a.every((p) => b.some((q) => q.name === p.name && (q.value ?? '') === (p.value ?? '')));

/**
 * Why the run of this node should be cancelled, or undefined to let it go on. The node is found by
 * type Plugin, template name and input values (the agent sends no node id; a loop's items differ by
 * their inputs). Without such a node (a templateRef, an older status) the workflow decides: stopped
 * or finished. A Stop keeps exit-handler nodes running, which only the node rule sees.
 */
export function whyCancel(t: TrackedNode, wf: ArgoWorkflowState | undefined): string | undefined {
  const name = `${t.namespace}/${t.workflow}`;
  if (!wf) return `the Argo workflow ${name} was deleted`;
  if (t.uid && wf.uid !== t.uid) return `the Argo workflow ${name} was deleted (one of the same name has another uid)`;
  const nodes = wf.nodes.filter((n) => n.type === 'Plugin' && (t.template === undefined || n.templateName === t.template) && sameInputs(t.inputs, n.inputs?.parameters));
  if (nodes.length && nodes.every((n) => FINISHED_NODE.has(n.phase ?? ''))) {
    const n = nodes[0]!;
    return `Argo ended node ${n.displayName ?? n.name ?? t.template} of ${name} (${n.phase}${n.message ? `: ${n.message}` : ''})`;
  }
  // A finished workflow never asks again (past its deadline Argo leaves a Running plugin node as it is).
  if (FINISHED_WORKFLOW.has(wf.phase ?? '')) return `the Argo workflow ${name} ended (${wf.phase}) before the Tandem run`;
  if (nodes.length) return undefined;
  if (wf.shutdown) return `the Argo workflow ${name} was stopped (spec.shutdown: ${wf.shutdown})`;
  return undefined;
}

export interface WorkflowWatchOptions {
  read: ReadWorkflow;
  /** Cancels the Tandem run (a run already closed is not an error). */
  cancel: (workflowId: string, reason: string) => Promise<void>;
  /** How often every tracked run's workflow is read. */
  everyMs: number;
  log?: (line: string) => void;
}

/** The runs this server reported as not final, each checked every `everyMs` against its Argo workflow. */
export class WorkflowWatch {
  private readonly tracked = new Map<string, TrackedNode>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private readonly opts: WorkflowWatchOptions) {}

  /** A run the server answered non-final for: watch its workflow. */
  track(workflowId: string, node: TrackedNode): void {
    this.tracked.set(workflowId, node);
  }

  /** A run that reached a final phase: nothing to cancel any more. */
  untrack(workflowId: string): void {
    this.tracked.delete(workflowId);
  }

  get size(): number {
    return this.tracked.size;
  }

  /** Reads each tracked run's workflow once and cancels the runs Argo gave up on. */
  async check(): Promise<void> {
    this.running ??= (async () => {
      const log = this.opts.log ?? (() => undefined);
      for (const [id, node] of [...this.tracked]) {
        let wf: ArgoWorkflowState | undefined;
        try {
          wf = await this.opts.read(node.namespace, node.workflow);
        } catch (e) {
          log(`workflow watch: cannot read Argo workflow ${node.namespace}/${node.workflow}: ${(e as Error).message}`);
          continue;
        }
        const why = whyCancel(node, wf);
        if (!why) continue;
        try {
          await this.opts.cancel(id, why);
          this.tracked.delete(id);
          log(`cancelled Tandem run ${id}: ${why}`);
        } catch (e) {
          log(`workflow watch: cancelling Tandem run ${id} failed (asked again in ${this.opts.everyMs} ms): ${(e as Error).message}`);
        }
      }
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  start(): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.check().finally(() => this.timer && tick()), this.opts.everyMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The apiserver side: GET the Workflow (argoproj.io/v1alpha1) with the given credentials. */
export function kubeWorkflowReader(kc: KubeConfig): ReadWorkflow {
  const api = kc.makeApiClient(CustomObjectsApi);
  return async (namespace, name) => {
    let wf: { metadata?: { uid?: string }; spec?: { shutdown?: string }; status?: { phase?: string; nodes?: Record<string, ArgoWorkflowState['nodes'][number]> } };
    try {
      wf = (await api.getNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', namespace, plural: 'workflows', name })) as typeof wf;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    }
    return { uid: wf.metadata?.uid ?? '', shutdown: wf.spec?.shutdown || undefined, phase: wf.status?.phase, nodes: Object.values(wf.status?.nodes ?? {}) };
  };
}
