// The FirecREST v2 contract, from the official OpenAPI 3.1 document: route matching and ajv validators
// for path/query parameters, request bodies and responses. The gateway runs every exchange through it;
// any mismatch is a contract violation that fails the test.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives wrapped under native ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

export const SPEC_PATH = fileURLToPath(new URL('../../../../shared/data/firecrest/firecrest-v2-openapi-2.5.6.yaml', import.meta.url));

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Record<string, unknown>;
}

interface Operation {
  operationId: string;
  parameters?: Param[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
  security?: unknown[];
}

export interface Route {
  method: string;
  template: string;
  operation: Operation;
  regex: RegExp;
  names: string[];
}

export interface Matched {
  route: Route;
  path: Record<string, string>;
}

export class Contract {
  readonly routes: Route[] = [];
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(specPath = SPEC_PATH) {
    const doc = parse(readFileSync(specPath, 'utf8')) as { paths: Record<string, Record<string, Operation>>; components: unknown };
    // FastAPI's documents carry `nullable`/`example` next to 3.1 keywords: not strict about unknown keywords.
    // ajv cannot compile discriminator mappings; the oneOf underneath still validates the same objects.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'firecrest', components: withoutNullable(doc.components) });
    for (const [template, ops] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(ops)) {
        const names: string[] = [];
        const pattern = template.replace(/\/$/, '').replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '{' || c === '}' ? c : `\\${c}`)).replace(/\{(\w+)\}/g, (_, n: string) => {
          names.push(n);
          return '([^/]+)';
        });
        this.routes.push({ method: method.toUpperCase(), template, operation, regex: new RegExp(`^${pattern}/?$`), names });
      }
    }
    // Literal segments win over templated ones (e.g. /status/systems vs /status/{system_name}/…).
    this.routes.sort((a, b) => a.names.length - b.names.length);
  }

  match(method: string, pathname: string): Matched | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.regex.exec(pathname);
      if (m) return { route, path: Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
    }
    return undefined;
  }

  private validator(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.cache.get(key);
    if (!v) {
      // Rebase local refs onto the registered document.
      v = this.ajv.compile(withoutNullable(JSON.parse(key.replace(/"#\/components\//g, '"firecrest#/components/'))) as Record<string, unknown>);
      this.cache.set(key, v);
    }
    return v;
  }

  private check(schema: Record<string, unknown>, value: unknown, where: string): string[] {
    const v = this.validator(schema);
    if (v(value)) return [];
    return (v.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message}`);
  }

  /** Validates parameters (coercing query strings per schema) and returns them typed. */
  params(m: Matched, query: URLSearchParams): { values: Record<string, unknown>; errors: string[] } {
    const errors: string[] = [];
    const values: Record<string, unknown> = {};
    const declared = m.route.operation.parameters ?? [];
    for (const key of new Set(query.keys())) {
      if (!declared.some((p) => p.in === 'query' && p.name === key)) errors.push(`query parameter "${key}" is not in the spec`);
    }
    for (const p of declared) {
      if (p.in === 'header') continue;
      const raw = p.in === 'path' ? m.path[p.name] : (query.get(p.name) ?? undefined);
      if (raw === undefined) {
        if (p.required) errors.push(`${p.in} parameter "${p.name}" is required`);
        continue;
      }
      const value = coerce(raw, p.schema);
      errors.push(...this.check(p.schema, value, `${p.in}.${p.name}`));
      values[p.name] = value;
    }
    return { values, errors };
  }

  body(m: Matched, contentType: string, json: unknown): string[] {
    const rb = m.route.operation.requestBody;
    if (!rb) return json === undefined ? [] : ['this operation takes no request body'];
    const media = Object.keys(rb.content).find((c) => contentType.startsWith(c));
    if (!media) return [`content type "${contentType}" is not one of ${Object.keys(rb.content).join(', ')}`];
    if (media !== 'application/json') return [];
    return this.check(rb.content[media]!.schema, json, 'body');
  }

  response(m: Matched, status: number, contentType: string | undefined, body: Buffer): string[] {
    const responses = m.route.operation.responses;
    const spec = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
    if (!spec) return [`status ${status} is not declared for ${m.route.method} ${m.route.template}`];
    if (!spec.content) return body.length === 0 ? [] : [`status ${status} must have no body`];
    const schema = spec.content['application/json']?.schema;
    if (!schema || Object.keys(schema).length === 0) return [];
    if (!contentType?.startsWith('application/json')) return [`status ${status} must be application/json`];
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return ['response body is not JSON'];
    }
    return this.check(schema, json, `response ${status}`);
  }
}

/**
 * OpenAPI 3.1 has no `nullable` (null is expressed with anyOf/type lists, which FastAPI also emits);
 * FastAPI leaves the 3.0 annotation beside them, and ajv would treat it as the 3.0 keyword. Drop it.
 */
function withoutNullable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNullable);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k, x]) => !(k === 'nullable' && typeof x === 'boolean')).map(([k, x]) => [k, withoutNullable(x)]));
  }
  return v;
}

function types(schema: Record<string, unknown>): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  const any = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  return any ? any.flatMap(types) : [];
}

function coerce(raw: string, schema: Record<string, unknown>): unknown {
  const t = types(schema);
  if (t.includes('integer') && /^-?\d+$/.test(raw)) return Number(raw);
  if (t.includes('number') && raw.trim() !== '' && !Number.isNaN(Number(raw))) return Number(raw);
  if (t.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}
