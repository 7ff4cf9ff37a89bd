// Argo's own JSON schema (draft 2020-12), compiled once with ajv. Adjustments, each matching what
// Argo's Go decoder accepts (v3.7.9's synchronization fields included): IntOrString is typed as plain string upstream, and Argo's parameter
// values (`AnyString`) also take YAML numbers and booleans; and Argo objects reject unknown fields
// (strict decoding in `argo lint`), which the generated schema does not say.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';

import { DEFAULTS } from '../../config/defaults.js';

/** The schema file; the CLI points it at TANDEM_ARGO_SCHEMA (config/worker.ts) with useArgoSchema(). */
let schemaFile: string = DEFAULTS.argoSchemaFile;

const SCALAR = { type: ['string', 'integer', 'number', 'boolean'] } as const;
/** Parameter-ish fields Argo declares as AnyString: YAML scalars of any kind are accepted. */
const ANY_STRING_FIELDS: Record<string, string[]> = {
  'io.argoproj.workflow.v1alpha1.Parameter': ['value', 'default'],
  'io.argoproj.workflow.v1alpha1.ValueFrom': ['default'],
  'io.argoproj.workflow.v1alpha1.SuspendTemplate': ['duration'],
};

type Json = Record<string, unknown>;

function adjust(schema: Json): Json {
  const defs = schema.definitions as Record<string, Json>;
  defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = { type: ['string', 'integer'] };
  for (const [def, fields] of Object.entries(ANY_STRING_FIELDS)) {
    const props = defs[def]?.properties as Record<string, Json> | undefined;
    for (const f of fields) if (props?.[f]) props[f] = { ...props[f], ...SCALAR };
  }
  // The shipped schema is Argo v4's, which dropped synchronization's single `mutex` and `semaphore`;
  // v3.x (v3.7.9 is the controller measured here) still takes them beside the lists, and its examples
  // use them (synchronization-*-legacy.yaml). The interpreter reads both forms (workflows/argo/sync.ts).
  const sync = defs['io.argoproj.workflow.v1alpha1.Synchronization']?.properties as Record<string, Json> | undefined;
  if (sync && !sync.mutex) sync.mutex = { $ref: '#/definitions/io.argoproj.workflow.v1alpha1.Mutex', description: 'Argo v3.x: one mutex (use mutexes)' };
  if (sync && !sync.semaphore) sync.semaphore = { $ref: '#/definitions/io.argoproj.workflow.v1alpha1.SemaphoreRef', description: 'Argo v3.x: one semaphore (use semaphores)' };
  // Likewise CronWorkflow's single `schedule` (v3.x's documented form: `schedule: "0 * * * *"`); v4
  // requires `schedules`. One of the two is then required by the semantic pass (argo/lang/cron.ts).
  const cron = defs['io.argoproj.workflow.v1alpha1.CronWorkflowSpec'];
  const cronProps = cron?.properties as Record<string, Json> | undefined;
  if (cron && cronProps && !cronProps.schedule) {
    cronProps.schedule = { type: 'string', description: 'Argo v3.x: one schedule in cron format (use schedules)' };
    if (Array.isArray(cron.required)) cron.required = (cron.required as string[]).filter((r) => r !== 'schedules');
  }
  // The generated `required` lists come from Go fields without omitempty, which Go's decoder never
  // enforces. A container's or script's image is checked by Argo's validation instead, after
  // templateDefaults (semantic.ts), and a script's source not at all; templateDefaults' own
  // container may leave out its image.
  const unrequire = (def: string, fields: string[]) => {
    const d = defs[def];
    if (d && Array.isArray(d.required)) d.required = (d.required as string[]).filter((r) => !fields.includes(r));
  };
  unrequire('io.k8s.api.core.v1.Container', ['image']);
  unrequire('io.argoproj.workflow.v1alpha1.ScriptTemplate', ['image', 'source']);
  const param = defs['io.argoproj.workflow.v1alpha1.Parameter']?.properties as Record<string, Json> | undefined;
  if (param?.enum) param.enum = { ...param.enum, items: SCALAR };
  // Strict decoding: Argo's own objects with declared properties take no other keys.
  for (const [name, def] of Object.entries(defs)) {
    if (name.startsWith('io.argoproj.workflow.v1alpha1.') && def.type === 'object' && def.properties && def.additionalProperties === undefined) {
      def.additionalProperties = false;
    }
  }
  return schema;
}

export interface SchemaIssue {
  /** JSON pointer path segments into the document. */
  path: (string | number)[];
  message: string;
}

const KIND_DEF: Record<string, string> = {
  Workflow: 'io.argoproj.workflow.v1alpha1.Workflow',
  WorkflowTemplate: 'io.argoproj.workflow.v1alpha1.WorkflowTemplate',
  ClusterWorkflowTemplate: 'io.argoproj.workflow.v1alpha1.ClusterWorkflowTemplate',
  CronWorkflow: 'io.argoproj.workflow.v1alpha1.CronWorkflow',
  WorkflowEventBinding: 'io.argoproj.workflow.v1alpha1.WorkflowEventBinding',
};
export const SUPPORTED_KINDS = Object.keys(KIND_DEF);

let compiled: Map<string, ValidateFunction> | undefined;

/** Validates against the schema in `file` from now on (compiled on first use, like the default one). */
export function useArgoSchema(file: string): void {
  if (file === schemaFile) return;
  schemaFile = file;
  compiled = undefined;
}

function validators(): Map<string, ValidateFunction> {
  if (compiled) return compiled;
  const schema = adjust(JSON.parse(readFileSync(schemaFile, 'utf8')) as Json);
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, code: { optimize: false } });
  // ajv-formats is CommonJS: its default export arrives wrapped under ESM.
  const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ?? addFormatsImport) as unknown as (a: Ajv2020) => void;
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('uint64', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= 0 });
  ajv.addFormat('byte', true);
  const rest = { ...schema };
  delete rest.oneOf;
  ajv.addSchema({ ...rest, $id: 'argo' });
  compiled = new Map();
  for (const [kind, def] of Object.entries(KIND_DEF)) {
    compiled.set(kind, ajv.getSchema(`argo#/definitions/${def}`)!);
  }
  return compiled;
}

function pathOf(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function describe(e: ErrorObject): SchemaIssue {
  const path = pathOf(e.instancePath);
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      return { path: [...path, key], message: `unknown field "${key}"` };
    }
    case 'required':
      return { path, message: `missing required field "${(e.params as { missingProperty: string }).missingProperty}"` };
    case 'const':
      return { path, message: `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}` };
    case 'type':
      return { path, message: `must be of type ${String((e.params as { type: unknown }).type)}` };
    default:
      return { path, message: e.message ?? e.keyword };
  }
}

/** Validates one document against Argo's schema for its kind; returns [] when valid. */
export function validateAgainstSchema(doc: unknown): SchemaIssue[] {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return [{ path: [], message: 'an Argo document must be a mapping' }];
  const kind = (doc as Json).kind;
  if (typeof kind !== 'string' || !KIND_DEF[kind]) {
    return [{ path: ['kind'], message: `kind must be one of ${SUPPORTED_KINDS.join(', ')} (got ${JSON.stringify(kind)})` }];
  }
  const validate = validators().get(kind)!;
  if (validate(doc)) return [];
  // ajv reports the same spot several times through anyOf branches; keep one line per path+message.
  const seen = new Set<string>();
  const out: SchemaIssue[] = [];
  for (const e of validate.errors ?? []) {
    const issue = describe(e);
    const key = `${issue.path.join('.')}|${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(issue);
    }
  }
  return out;
}

/** Compiles the schema ahead of time (the first validation would otherwise pay for it). */
export function warmSchema(): void {
  validators();
}
