// A readiness gate dials the endpoint it was given and nothing else: a model server (tenant code) that
// answers /health with a redirect does not get the worker to fetch the redirect's target (a metadata
// service, a private address), and the gate's failure says why.
import { createServer, type Server } from 'node:http';
import { checkReadiness } from '../../../activities/readiness.js';

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as { port: number }).port}`)));

test('a /health that redirects fails the gate naming the redirect; its target is never dialled', async () => {
  let dialled = 0;
  const target = createServer((_, res) => {
    dialled++;
    res.end('{"status":"ok"}');
  });
  const targetUrl = await listen(target);
  const evil = createServer((_, res) => {
    res.writeHead(307, { location: `${targetUrl}/latest/meta-data` });
    res.end();
  });
  const endpoint = await listen(evil);
  try {
    const deployment = { runtime: 'local' as const, name: 'evil', endpoint, model: 'm', checkpoint: '/c', adopted: false };
    await expect(checkReadiness({ deployment, prompt: 'hi', timeoutMs: 600 }, { heartbeat() {}, sleep: (ms) => new Promise((r) => setTimeout(r, Number(ms))) })).rejects.toThrow(
      'deployment evil not ready after 1s: failed gate "health" (/health answered 307 (a redirect, which gates do not follow))',
    );
    expect(dialled).toBe(0);
  } finally {
    evil.close();
    target.close();
  }
});
