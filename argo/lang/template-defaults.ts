// `spec.templateDefaults`: values every template of the workflow gets unless it sets its own. Argo's
// controller (workflow/controller/operator.go mergedTemplateDefaultsInto, v3.7.9) strategic-merges
// each template it runs over the defaults: the template wins field by field, mappings merge deeply,
// lists are replaced except those Kubernetes merges by a key (a container's env by name, volumes by
// name, …), and a default for another template type (a `script` default on a `container` template)
// is dropped. Its validation also lets a container or script leave out `image` when the defaults give
// one. Applied where a run's input is built (argo/resolve.ts) and before lint (argo/lint/any-string.ts).
import { TEMPLATE_TYPES, templateTypeOf, type Json } from './types.js';

/** List fields merged item by item on a key (patchStrategy "merge" in Argo's and Kubernetes' types). */
const TEMPLATE_LIST_KEYS: Record<string, string> = { volumes: 'name', initContainers: 'name', sidecars: 'name', tolerations: 'key', hostAliases: 'ip' };
const CONTAINER_LIST_KEYS: Record<string, string> = { env: 'name', ports: 'containerPort', volumeMounts: 'mountPath', volumeDevices: 'devicePath' };
/** Template fields that hold a Kubernetes container (whose own lists merge by CONTAINER_LIST_KEYS). */
const CONTAINER_FIELDS = new Set(['container', 'script']);

const isMap = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** The list keys for the children of a map found at field `field` (a container's own lists merge by key). */
const childKeys = (field: string): Record<string, string> => (CONTAINER_FIELDS.has(field) || field === 'sidecars' || field === 'initContainers' ? CONTAINER_LIST_KEYS : {});

/**
 * `over` strategic-merged onto `base`, a new value (neither input changed). `by`: the key this value's
 * items merge on when it is such a list; `keys`: the same for this value's fields when it is a map.
 */
function merge(base: unknown, over: unknown, by: string | undefined, keys: Record<string, string>, field: string): unknown {
  if (over === undefined) return structuredClone(base);
  if (Array.isArray(base) && Array.isArray(over) && by) {
    const out = base.map((x) => structuredClone(x));
    for (const item of over) {
      const at = isMap(item) ? out.findIndex((x) => isMap(x) && x[by] === item[by]) : -1;
      if (at >= 0) out[at] = merge(out[at], item, undefined, childKeys(field), field);
      else out.push(structuredClone(item));
    }
    return out;
  }
  if (!isMap(base) || !isMap(over)) return structuredClone(over);
  const out: Json = structuredClone(base);
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v, keys[k], childKeys(k), k);
  return out;
}

/** The template as Argo runs it under these defaults (itself when there are none). */
export function withTemplateDefaults(template: Json, defaults: unknown): Json {
  if (!isMap(defaults) || Object.keys(defaults).length === 0) return template;
  const type = templateTypeOf(template);
  const applicable: Json = {};
  for (const [k, v] of Object.entries(defaults)) if (!(TEMPLATE_TYPES as readonly string[]).includes(k) || k === type) applicable[k] = v;
  return merge(applicable, template, undefined, TEMPLATE_LIST_KEYS, '') as Json;
}

/**
 * A workflow spec's templates, and the inline templates of their steps and tasks, with its
 * templateDefaults applied, in place. Applying it twice changes nothing (the templates win).
 */
export function applyTemplateDefaults(spec: Json): void {
  const defaults = spec.templateDefaults;
  if (!isMap(defaults) || !Array.isArray(spec.templates)) return;
  const apply = (t: unknown): unknown => {
    if (!isMap(t)) return t;
    const merged = withTemplateDefaults(t, defaults);
    const calls = [...(Array.isArray(merged.steps) ? merged.steps.flatMap((g) => (Array.isArray(g) ? g : [])) : []), ...(isMap(merged.dag) && Array.isArray(merged.dag.tasks) ? merged.dag.tasks : [])];
    for (const c of calls) if (isMap(c) && isMap(c.inline)) c.inline = apply(c.inline);
    return merged;
  };
  spec.templates = spec.templates.map(apply);
}
