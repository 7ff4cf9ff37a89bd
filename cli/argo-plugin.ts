// `tandem argo executor-plugin serve`: Tandem as an Argo Workflows executor plugin, the sidecar of
// Argo's agent pod (templates/argo/executor-plugin/). Kept out of cli/argo.ts so the HTTP server and
// the Temporal client load only when this command runs.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parsePort } from './port.js';

/** Where Argo's agent pod mounts the token it sends as `Authorization: Bearer …`. */
export const ARGO_TOKEN_FILE = '/var/run/argo/token';
export const DEFAULT_PLUGIN_PORT = 4355;

function readToken(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--token-file ${file}: cannot read the agent's token (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const token = text.trim();
  if (!token) throw new Error(`--token-file ${file} is empty: no request could be authenticated`);
  return token;
}

export function registerExecutorPluginCommands(argo: Command): void {
  const plugin = argo.command('executor-plugin').description('run Tandem pipelines from `plugin: {tandem: …}` templates of a real Argo Workflows controller');
  plugin
    .command('serve')
    .description('serve the executor plugin protocol (POST /api/v1/template.execute) for the agent pod')
    .option('--port <port>', 'port the agent calls on localhost (the manifest\'s containerPort)', parsePort, DEFAULT_PLUGIN_PORT)
    .option('--host <host>', 'address to bind (the agent calls localhost)', '127.0.0.1')
    .option('--token-file <path>', "file holding the agent's bearer token (re-read when it changes)", ARGO_TOKEN_FILE)
    .action(async (o: { port: number; host: string; tokenFile: string }, cmd: Command) => {
      readToken(o.tokenFile); // refuse to start without a token rather than answer 403 to everything
      const g = cmd.optsWithGlobals<{ address: string; namespace: string; taskQueue: string }>();
      const [{ createExecutorPluginServer, listen, temporalRuns }, { TandemClient }] = await Promise.all([import('../argo/executor-plugin/server.js'), import('../sdk/client.js')]);
      let cached = { at: 0, token: '' };
      const token = () => {
        // Re-read at most once a second: a rotated token applies without a restart.
        if (Date.now() - cached.at > 1000) cached = { at: Date.now(), token: readToken(o.tokenFile) };
        return cached.token;
      };
      const server = createExecutorPluginServer({
        token,
        runs: temporalRuns(() => TandemClient.connect({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue })),
        log: (l) => console.log(l),
      });
      const port = await listen(server, o.port, o.host);
      console.log(`tandem executor plugin listening on http://${o.host}:${port} (Temporal ${g.address}, namespace ${g.namespace}, task queue ${g.taskQueue})`);
      await new Promise<void>((resolve) => {
        const stop = () => server.close(() => resolve());
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}
