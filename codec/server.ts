// The codec server (`tandem codec-server`): lets the Temporal Web UI and `temporal … --codec-endpoint`
// show decrypted payloads to the operators allowed to see them, without those tools ever holding a key.
// Temporal's remote-codec protocol: POST <endpoint>/decode and /encode with `{payloads: [{metadata:
// {key: base64}, data: base64}]}` (protobuf's JSON form of Payloads), answered in the same shape.
// Browsers call it cross-origin from the Web UI, so CORS preflights are answered for the configured
// origins (with the X-Namespace header the UI sends). Optional bearer auth, compared in constant time.
// Binds loopback only: put a TLS-terminating proxy in front to serve anyone else.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Origins CORS answers (the Web UI's); others get no CORS headers, and their preflights a 403. */
  origins: string[];
  /** Bearer token required on /encode and /decode when set. */
  token?: string;
  /** 0: any free port. */
  port?: number;
  /** Largest request body accepted (bytes). */
  maxBodyBytes?: number;
}

export interface CodecServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';
const DEFAULT_MAX_BODY = 8 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
function b64(v: unknown, where: string): Uint8Array {
  if (typeof v !== 'string' || !BASE64.test(v)) throw new HttpError(400, `${where} must be a base64 string`);
  return Buffer.from(v, 'base64');
}

/** Protobuf JSON → Payload, checked (a request is untrusted input). */
export function payloadsFromJson(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new HttpError(400, 'the body must be {"payloads": [...]}');
  return list.map((p: unknown, i) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new HttpError(400, `payloads[${i}] must be an object`);
    const { metadata = {}, data = '' } = p as JsonPayload;
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new HttpError(400, `payloads[${i}].metadata must be an object`);
    return { metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, b64(v, `payloads[${i}].metadata.${k}`)])), data: b64(data, `payloads[${i}].data`) };
  });
}

export function payloadsToJson(payloads: Payload[]): { payloads: JsonPayload[] } {
  return {
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
      data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
    })),
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && !!m;
}

async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) throw new HttpError(413, `the body is larger than ${max} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function startCodecServer(o: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set(o.origins);
  const max = o.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const send = (res: ServerResponse, status: number, body?: unknown) => {
    res.statusCode = status;
    if (body === undefined) return void res.end();
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const origin = req.headers.origin;
      const allowed = origin !== undefined && origins.has(origin);
      res.setHeader('Vary', 'Origin');
      if (allowed) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
      }
      const path = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
      if (req.method === 'OPTIONS') {
        if (!allowed) return send(res, 403, { error: `origin ${origin ?? '(none)'} is not allowed` });
        res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        return send(res, 204);
      }
      if (path !== '/encode' && path !== '/decode') return send(res, 404, { error: 'POST /encode or /decode' });
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST, OPTIONS');
        return send(res, 405, { error: 'POST only' });
      }
      if (o.token !== undefined && !tokenMatches(req.headers.authorization, o.token)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return send(res, 401, { error: 'a valid bearer token is required' });
      }
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, max));
      } catch (e) {
        throw e instanceof HttpError ? e : new HttpError(400, 'the body is not JSON');
      }
      const payloads = payloadsFromJson(body);
      const out = path === '/encode' ? await o.codec.encode(payloads) : await o.codec.decode(payloads);
      send(res, 200, payloadsToJson(out));
    })().catch((e: unknown) => {
      // Codec errors name the key id at most, never a key; anything else is not echoed.
      const status = e instanceof HttpError ? e.status : (e as Error).name === 'CodecError' ? 422 : 500;
      if (!res.headersSent) send(res, status, { error: status === 500 ? 'internal error' : (e as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
