// `tandem argo executor-plugin serve`: Tandem as an Argo Workflows executor plugin, the sidecar of
// Argo's agent pod (templates/argo/executor-plugin/). Kept out of cli/argo.ts so the HTTP server and
// the Temporal client load only when this command runs.
import { existsSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { parsePort } from './port.js';
import { parseDuration } from '../contract/duration.js';
import { DEFAULTS } from '../config/defaults.js';
import { readInput, readProblem, TOKEN_FILE_BYTES } from '../config/input-file.js';

/** Where Argo's agent pod mounts the token it sends as `Authorization: Bearer …`. */
export const ARGO_TOKEN_FILE = '/var/run/argo/token';
export const DEFAULT_PLUGIN_PORT = 4355;
/** Where a pod's service-account token is mounted (the plugin's own, `automountServiceAccountToken`). */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

function durationOption(min: number) {
  return (v: string): number => {
    const ms = parseDuration(v);
    if (ms === undefined || ms < min) throw new InvalidArgumentError(`must be a duration of at least ${min / 1000}s, such as "30s" or "15m"`);
    return ms;
  };
}
const fmt = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

function readToken(file: string): string {
  let text: string;
  try {
    text = readInput(file, TOKEN_FILE_BYTES).toString('utf8');
  } catch (e) {
    throw new Error(`--token-file ${file}: cannot read the agent's token (${readProblem(e)})`);
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
    .option('--temporal-unreachable-limit <duration>', `how long Temporal may be unreachable for a node (kept Running meanwhile) before the node fails (default ${fmt(DEFAULTS.pluginUnreachableLimitMs)})`, durationOption(1000), DEFAULTS.pluginUnreachableLimitMs)
    .option('--kubeconfig <path>', "credentials for reading the Argo workflows (default: the pod's service-account token)")
    .option('--watch-every <duration>', `how often the Argo workflows of unfinished runs are read; a stopped or deleted workflow cancels its runs (default ${fmt(DEFAULTS.pluginWatchEveryMs)})`, durationOption(1000), DEFAULTS.pluginWatchEveryMs)
    .option('--no-watch', 'do not read the Argo workflows (stopping or deleting one then leaves its Tandem runs going)')
    .action(async (o: { port: number; host: string; tokenFile: string; temporalUnreachableLimit: number; kubeconfig?: string; watchEvery: number; watch: boolean }, cmd: Command) => {
      readToken(o.tokenFile); // refuse to start without a token rather than answer 403 to everything
      const g = cmd.optsWithGlobals<{ address: string; namespace: string; taskQueue: string }>();
      const [{ createExecutorPluginServer, listen, temporalRuns }, { TandemClient }, { WorkflowWatch, kubeWorkflowReader }, { KubeConfig }] = await Promise.all([
        import('../argo/executor-plugin/server.js'),
        import('../sdk/client.js'),
        import('../argo/executor-plugin/watch.js'),
        import('@kubernetes/client-node'),
      ]);
      let cached = { at: 0, token: '' };
      const token = () => {
        // Re-read at most once a second: a rotated token applies without a restart.
        if (Date.now() - cached.at > 1000) cached = { at: Date.now(), token: readToken(o.tokenFile) };
        return cached.token;
      };
      const runs = temporalRuns(() => TandemClient.connect({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue }));
      let kc: InstanceType<typeof KubeConfig> | undefined;
      if (o.watch && o.kubeconfig) {
        kc = new KubeConfig();
        kc.loadFromFile(o.kubeconfig);
      } else if (o.watch && existsSync(IN_CLUSTER_TOKEN)) {
        kc = new KubeConfig();
        kc.loadFromCluster();
      } else if (o.watch) {
        console.log(`no Kubernetes credentials (no --kubeconfig, no ${IN_CLUSTER_TOKEN}): stopping or deleting an Argo workflow will not cancel its Tandem runs`);
      }
      const log = (l: string) => console.log(l);
      const watch = kc ? new WorkflowWatch({ read: kubeWorkflowReader(kc), cancel: (id) => runs.cancel(id), everyMs: o.watchEvery, log }) : undefined;
      const server = createExecutorPluginServer({ token, runs, unreachableLimitMs: o.temporalUnreachableLimit, watch, log });
      const port = await listen(server, o.port, o.host);
      watch?.start();
      console.log(`tandem executor plugin listening on http://${o.host}:${port} (Temporal ${g.address}, namespace ${g.namespace}, task queue ${g.taskQueue}; ${watch ? `watching Argo workflows every ${fmt(o.watchEvery)}` : 'not watching Argo workflows'})`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          // Argo deletes the agent pod when the workflow ends or is deleted: one last look, so a run
          // whose workflow was stopped or deleted a moment ago is cancelled before this sidecar goes.
          watch?.stop();
          void (watch?.check() ?? Promise.resolve()).finally(() => server.close(() => resolve()));
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}
