// The worker's /metrics endpoint (Prometheus text format), on TANDEM_METRICS_HOST:TANDEM_METRICS_PORT
// (config/worker.ts; loopback by default). Only GET /metrics (and HEAD); everything else is 404.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics.js';

export interface MetricsServer {
  /** http://host:port/metrics */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on host:port (port 0: a free one) and resolves once it does. */
export async function startMetricsServer(o: { host: string; port: number }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${e.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
