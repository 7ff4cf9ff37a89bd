// The run's node tree as the status query shows it. Node ids follow Argo's: the root is the run's
// name, every later node `<name>-<n>` in creation order, so a replayed run gets the same ids.
import type { ArgoNode, ArgoStatus, NodeOutputs, Phase } from '../../argo/lang/types.js';
import { emptyOutputs, type NodeResult } from './model.js';
import { observeArgoNode } from '../observe.js';

export const now = (): string => new Date().toISOString();

export type NewNode = Omit<ArgoNode, 'id' | 'children' | 'phase' | 'startedAt'> & { phase?: Phase };

export class NodeTree {
  private count = 0;
  constructor(
    private readonly runName: string,
    private readonly status: ArgoStatus,
    /** A child workflow's nodes (workflows/argo/fanout.ts): `<prefix>-<n>` from 1, so they never meet the parent's ids. */
    private readonly idPrefix?: string,
  ) {}

  add(n: NewNode): ArgoNode {
    const id = this.idPrefix !== undefined ? `${this.idPrefix}-${this.count + 1}` : this.count === 0 ? this.runName : `${this.runName}-${this.count}`;
    this.count++;
    const node: ArgoNode = { id, children: [], phase: 'Running', startedAt: now(), ...n } as ArgoNode;
    this.status.nodes[id] = node;
    if (n.parentId) this.status.nodes[n.parentId]?.children.push(id);
    return node;
  }
}

export function finish(node: ArgoNode, phase: Phase, message?: string, outputs?: NodeOutputs): NodeResult {
  node.phase = phase;
  node.finishedAt = now();
  observeArgoNode(node.type, phase, node.startedAt); // metrics (a sink call: no command)
  if (message) node.message = message;
  if (outputs) node.outputs = outputs;
  return { id: node.id, phase, message, outputs: outputs ?? emptyOutputs(), daemoned: node.daemoned };
}
