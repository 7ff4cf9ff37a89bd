// A TLS front for the real dev server, as an ingress or Envoy puts one before a self-hosted Temporal:
// HTTP/2 over TLS on 127.0.0.1, client certificates required (mTLS), and an API-key check on the
// `authorization` header like Temporal Cloud's, forwarding each gRPC call to the dev server, which
// itself has no TLS. Tests reach Temporal only through it, so a client that gets TLS, the client
// certificate, the server name, the API key or the metadata wrong fails as it would against a real
// secured cluster. (The PostgreSQL-backed server with its own TLS is the other bed; this one is fast.)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface Pki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from another CA: the front must refuse it. */
  strangerCert: string;
  strangerKey: string;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

/** A CA, a server certificate for `serverName` (and IP 127.0.0.1), a client certificate, and a stranger's. */
export function makePki(dir: string, serverName = 'temporal.test'): Pki {
  const ca = (name: string) => openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`], dir);
  const leaf = (name: string, issuer: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`], dir);
  };
  ca('ca');
  ca('stranger-ca');
  leaf('server', 'ca', `subjectAltName=DNS:${serverName},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  leaf('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  leaf('stranger', 'stranger-ca', 'extendedKeyUsage=clientAuth\n');
  const p = (f: string) => join(dir, f);
  return { dir, ca: p('ca.pem'), serverCert: p('server.pem'), serverKey: p('server.key'), clientCert: p('client.pem'), clientKey: p('client.key'), strangerCert: p('stranger.pem'), strangerKey: p('stranger.key') };
}

// Hop-by-hop and pseudo headers are the front's own; everything else (gRPC metadata) passes through.
const DROP = new Set([':scheme', ':authority', ':status', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'http2-settings']);
const forwardable = (h: http2.IncomingHttpHeaders) => Object.fromEntries(Object.entries(h).filter(([k]) => !DROP.has(k)));

export interface TlsFront {
  address: string;
  /** Calls the front refused (wrong key or metadata), and calls it forwarded. */
  refused: number;
  forwarded: number;
  /** The metadata headers the last forwarded call carried. */
  lastHeaders?: http2.IncomingHttpHeaders;
  close(): Promise<void>;
}

export async function startTlsFront(opts: { upstream: string; pki: Pki; apiKey: string; requireHeader?: [string, string] }): Promise<TlsFront> {
  const upstream = http2.connect(`http://${opts.upstream}`);
  upstream.on('error', () => undefined);
  const server = http2.createSecureServer({
    key: readFileSync(opts.pki.serverKey),
    cert: readFileSync(opts.pki.serverCert),
    ca: readFileSync(opts.pki.ca),
    requestCert: true,
    rejectUnauthorized: true,
    ALPNProtocols: ['h2'],
  });
  const front: TlsFront = { address: '', refused: 0, forwarded: 0, close: async () => undefined };
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const [hk, hv] = opts.requireHeader ?? [];
    if (headers.authorization !== `Bearer ${opts.apiKey}` || (hk && headers[hk] !== hv)) {
      front.refused++;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'missing or wrong API key' }, { endStream: true });
      return;
    }
    front.forwarded++;
    front.lastHeaders = headers;
    const req = upstream.request(forwardable(headers));
    req.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    let trailers: http2.OutgoingHttpHeaders = {};
    req.on('trailers', (t) => (trailers = forwardable(t)));
    // A caller that goes away (a cancelled long poll at worker shutdown) cancels the upstream call.
    stream.on('close', () => {
      if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
    });
    req.on('response', (h) => {
      if (stream.destroyed || stream.closed) return;
      // A trailers-only response (an error) ends with its headers.
      if (h['grpc-status'] !== undefined) {
        stream.respond({ ...forwardable(h), ':status': h[':status'] ?? 200 }, { endStream: true });
        req.resume();
        return;
      }
      stream.respond({ ...forwardable(h), ':status': h[':status'] ?? 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => {
        if (!stream.destroyed) stream.sendTrailers(trailers);
      });
      req.pipe(stream);
    });
    stream.pipe(req);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  front.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  front.close = async () => {
    for (const s of sessions) s.destroy();
    upstream.close();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return front;
}
