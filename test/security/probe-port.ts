// A port on the host's 127.0.0.1 for a sandbox to try to reach. A prober that connects and leaves at
// once (bash's `exec 3<>/dev/tcp/...` in a subshell) makes the greeting meet a closed socket, and the
// kernel answers with a reset: without an 'error' listener that ECONNRESET is an uncaught exception
// that fails the whole suite after its tests passed (it did, once, in CI).
import { createServer, type Server } from 'node:net';

/** Listens on 127.0.0.1 (an ephemeral port), greets each connection and ignores its errors. */
export async function probePort(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined); // a reset from a prober that already left is the expected end
    socket.end('hello');
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}
