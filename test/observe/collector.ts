// An in-process OTLP/HTTP trace collector on loopback for the tracing tests: accepts POST /v1/traces
// with a JSON ExportTraceServiceRequest (what @opentelemetry/exporter-trace-otlp-http sends) and keeps
// every span with its resource's service name. Not a fake of Tandem: it is the receiving end a real
// OpenTelemetry Collector would be, speaking the same protocol.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CollectedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
  kvlistValue?: unknown;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: OtlpKeyValue[] }[] }[] }[];
}

const value = (v: OtlpValue): unknown => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return v.kvlistValue ?? v;
};
const attributes = (kvs: OtlpKeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, value(kv.value)]));

export interface Collector {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: CollectedSpan[];
  /** The headers of every export request. */
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const spans: CollectedSpan[] = [];
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
        requests.push(req.headers);
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributes(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ service, name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, attributes: attributes(s.attributes) });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, requests, close: () => new Promise((r) => server.close(() => r())) };
}
