// The subset of apiserver validation that Tandem's objects can trip: answered as the real server
// does, 422 Invalid with a Status naming each field (details.causes).
import { ApiError, type KObject } from './store.js';
import type { ResourceDef } from './apiserver.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

type Cause = { field: string; message: string; reason: string };

interface Container {
  name?: string;
  image?: string;
  ports?: { name?: string; containerPort?: number }[];
  securityContext?: { privileged?: boolean };
}
interface PodSpec {
  containers?: Container[];
  restartPolicy?: string;
  volumes?: { name?: string; hostPath?: unknown }[];
}

function podSpecCauses(spec: PodSpec | undefined, at: string): Cause[] {
  const causes: Cause[] = [];
  if (!spec?.containers?.length) causes.push({ field: `${at}.containers`, message: 'Required value', reason: 'FieldValueRequired' });
  spec?.containers?.forEach((c, i) => {
    if (!c.name || !DNS_LABEL.test(c.name)) causes.push({ field: `${at}.containers[${i}].name`, message: c.name ? `Invalid value: "${c.name}": a lowercase RFC 1123 label` : 'Required value', reason: c.name ? 'FieldValueInvalid' : 'FieldValueRequired' });
    if (!c.image) causes.push({ field: `${at}.containers[${i}].image`, message: 'Required value', reason: 'FieldValueRequired' });
  });
  return causes;
}

function labelCauses(labels: Record<string, string> | undefined, at: string): Cause[] {
  return Object.entries(labels ?? {})
    .filter(([, v]) => v.length > 63 || !LABEL_VALUE.test(v))
    .map(([k, v]) => ({ field: `${at}.labels`, message: `Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.' (key ${k})`, reason: 'FieldValueInvalid' }));
}

export function validate(def: ResourceDef, o: KObject): void {
  const causes: Cause[] = [];
  const name = o.metadata?.name;
  if (!name) causes.push({ field: 'metadata.name', message: 'Required value: name or generateName is required', reason: 'FieldValueRequired' });
  else if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`, reason: 'FieldValueInvalid' });
  causes.push(...labelCauses(o.metadata?.labels, 'metadata'));
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  if (def.plural === 'pods') causes.push(...podSpecCauses(spec as PodSpec, 'spec'));
  if (def.plural === 'jobs') {
    // The Job controller labels pods with job-name=<name>: the name must also be a valid label value.
    if (name && name.length > 63) causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": must be no more than 63 characters`, reason: 'FieldValueInvalid' });
    const tpl = spec.template as { metadata?: { labels?: Record<string, string> }; spec?: PodSpec } | undefined;
    causes.push(...podSpecCauses(tpl?.spec, 'spec.template.spec'));
    causes.push(...labelCauses(tpl?.metadata?.labels, 'spec.template.metadata'));
    const rp = tpl?.spec?.restartPolicy;
    if (rp !== 'Never' && rp !== 'OnFailure') causes.push({ field: 'spec.template.spec.restartPolicy', message: `Unsupported value: "${rp ?? 'Always'}": supported values: "OnFailure", "Never"`, reason: 'FieldValueNotSupported' });
  }
  if (def.plural === 'deployments' || def.plural === 'replicasets') {
    const sel = (spec.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
    const tpl = spec.template as { metadata?: { labels?: Record<string, string> }; spec?: PodSpec } | undefined;
    if (!sel || !Object.keys(sel).length) causes.push({ field: 'spec.selector', message: 'Required value', reason: 'FieldValueRequired' });
    else if (!Object.entries(sel).every(([k, v]) => tpl?.metadata?.labels?.[k] === v)) causes.push({ field: 'spec.template.metadata.labels', message: '`selector` does not match template `labels`', reason: 'FieldValueInvalid' });
    causes.push(...podSpecCauses(tpl?.spec, 'spec.template.spec'));
    causes.push(...labelCauses(tpl?.metadata?.labels, 'spec.template.metadata'));
    const ru = (spec.strategy as { rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } } | undefined)?.rollingUpdate;
    if (ru && Number(ru.maxSurge ?? 1) === 0 && Number(ru.maxUnavailable ?? 1) === 0) causes.push({ field: 'spec.strategy.rollingUpdate.maxUnavailable', message: 'Invalid value: 0: may not be 0 when `maxSurge` is 0', reason: 'FieldValueInvalid' });
  }
  if (def.plural === 'nodes') {
    // What the apiserver checks of spec.taints: key, a known effect, and unique (key, effect) pairs.
    const taints = ((spec.taints as { key?: string; value?: string; effect?: string }[] | undefined) ?? []);
    const seen = new Set<string>();
    taints.forEach((t, i) => {
      if (!t.key) causes.push({ field: `spec.taints[${i}].key`, message: 'Required value', reason: 'FieldValueRequired' });
      if (!['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(t.effect ?? '')) causes.push({ field: `spec.taints[${i}].effect`, message: `Unsupported value: "${t.effect ?? ''}": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`, reason: 'FieldValueNotSupported' });
      if (t.value !== undefined && (t.value.length > 63 || !LABEL_VALUE.test(t.value))) causes.push({ field: `spec.taints[${i}].value`, message: `Invalid value: "${t.value}"`, reason: 'FieldValueInvalid' });
      const k = `${t.key}:${t.effect}`;
      if (seen.has(k)) causes.push({ field: `spec.taints[${i}]`, message: `Duplicate value: "${k}": taints must be unique by key and effect pair`, reason: 'FieldValueDuplicate' });
      seen.add(k);
    });
  }
  if (def.plural === 'services') {
    const ports = spec.ports as unknown[] | undefined;
    if (!ports?.length) causes.push({ field: 'spec.ports', message: 'Required value', reason: 'FieldValueRequired' });
  }
  if (causes.length) {
    const kind = def.group ? `${def.kind}.${def.group}` : def.kind;
    throw new ApiError(422, 'Invalid', `${kind} "${name ?? ''}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, causes, { name, kind: def.kind, group: def.group });
  }
}
