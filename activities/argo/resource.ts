// Argo `resource` templates, the backend-independent part: successCondition / failureCondition
// (Kubernetes label-selector syntax applied to any field: `status.succeeded > 2,status.failed == 0`,
// `metadata.labels.x in (a,b)`, `!status.failed`), and output parameters from the resulting object
// (`jsonPath: '{.metadata.name}'`, `jqFilter: '.'` / `.a.b` paths).
import { jsonpath } from '../../argo/lang/jsonpath.js';

export type KObject = Record<string, unknown>;

/** Where a resource template's action is performed (backends/kubernetes/resources.ts on a cluster). */
export interface ArgoKubernetes {
  /**
   * Performs `action` (get | create | apply | replace | patch | delete) on the manifest and returns
   * the object as the API server has it afterwards (undefined once deleted).
   */
  apply(manifest: string, action: string, opts?: { namespace?: string; mergeStrategy?: string; flags?: string[] }): Promise<KObject | undefined>;
  /** The object's current state, or undefined when it does not exist. */
  get(ref: { apiVersion: string; kind: string; namespace?: string; name: string }): Promise<KObject | undefined>;
  /** A ConfigMap's value (semaphore limits), or undefined when the ConfigMap or key is missing. */
  configMapValue?(namespace: string, name: string, key: string): Promise<string | undefined>;
}

function field(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) && /^\d+$/.test(part) ? cur[Number(part)] : (cur as Record<string, unknown>)[part];
  }
  return cur;
}

const text = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** One requirement of a selector, as Argo evaluates it with k8s.io/apimachinery's labels parser. */
function requirement(obj: KObject, req: string): boolean {
  const r = req.trim();
  let m = /^!\s*([A-Za-z0-9_./-]+)$/.exec(r);
  if (m) return field(obj, m[1]!) === undefined;
  m = /^([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(r);
  if (m) {
    const values = m[3]!.split(',').map((v) => v.trim());
    const has = field(obj, m[1]!) !== undefined && values.includes(text(field(obj, m[1]!)));
    return m[2] === 'in' ? has : !has;
  }
  m = /^([A-Za-z0-9_./-]+)\s*(==|!=|=|>|<)\s*(.*)$/.exec(r);
  if (m) {
    const v = field(obj, m[1]!);
    const want = m[3]!.trim();
    if (m[2] === '>' || m[2] === '<') {
      const a = Number(text(v));
      const b = Number(want);
      if (v === undefined || Number.isNaN(a) || Number.isNaN(b)) return false;
      return m[2] === '>' ? a > b : a < b;
    }
    const eq = v !== undefined && text(v) === want;
    return m[2] === '!=' ? !eq : eq;
  }
  m = /^([A-Za-z0-9_./-]+)$/.exec(r);
  if (m) return field(obj, m[1]!) !== undefined;
  throw new Error(`cannot parse condition requirement ${JSON.stringify(r)}`);
}

/** True when every comma-separated requirement of `selector` holds on the object. */
export function conditionHolds(obj: KObject, selector: string): boolean {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.filter((p) => p.trim()).every((p) => requirement(obj, p));
}

/** kubectl's `{.a.b}` jsonpath (also a plain `.a.b` or `$.a.b`), rendered as kubectl prints it. */
export function kubectlJsonPath(obj: KObject, path: string): string {
  const inner = path.trim().replace(/^\{(.*)\}$/s, '$1').trim();
  const v = jsonpath(obj, inner.startsWith('$') ? inner : `$${inner.startsWith('.') || inner.startsWith('[') ? '' : '.'}${inner}`);
  if (Array.isArray(v)) return v.map(text).join(' ');
  return text(v);
}

/** The jq subset Argo's examples use: `.` and dotted paths (`.metadata.name`, `.status`). */
export function jqPath(obj: KObject, filter: string): string {
  const f = filter.trim();
  if (f === '.') return JSON.stringify(obj);
  const m = /^(\.[A-Za-z0-9_-]+)+$/.exec(f);
  if (!m) throw new Error(`jqFilter ${JSON.stringify(filter)}: only "." and .a.b paths are supported on Tandem`);
  const v = field(obj, f.slice(1));
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}
