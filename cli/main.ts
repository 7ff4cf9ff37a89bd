#!/usr/bin/env node
// The `tandem` command line: run pipelines, follow them, inspect and cancel them, and start a local
// Temporal dev server with a worker for development.
import { Command, Option } from 'commander';
import { printError } from './errors.js';
import type { TandemClient } from '../sdk/client.js';
import { ProgressPrinter, formatStatus } from './render.js';
import { failoverTuning, type FailoverFlags } from './failover.js';
import { collectSiteQueue } from './site-queues.js';
import { registerCommandGroups } from './groups.js';
import { loadCliConfig, loadClientConfig, loadObserveConfig, type ClientConfig } from '../config/worker.js';
import { DEFAULTS } from '../config/defaults.js';
import { parsePort } from './port.js';
import { examples } from './help.js';
import { tandemVersion } from '../config/version.js';

// Start-up stays light (`tandem --help` and `--version` in well under a second): the Temporal client
// and worker, the Kubernetes client and Ajv are imported inside the commands that use them, and the
// command groups' modules only when the command line names them (./groups.ts).
const sdk = () => import('../sdk/client.js');
const devCommands = () => import('./dev.js');

const VERSION = tandemVersion();

// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TANDEM_TASK_QUEUE are read once, by config/worker.ts; they
// are the defaults of the flags below (a flag wins over its variable). A bad one is reported when a
// command runs (--help still works); commands that load the whole worker configuration report it
// together with every other problem.
let envError: unknown;
function clientConfig(): ClientConfig {
  try {
    return loadClientConfig();
  } catch (e) {
    envError = e;
    return { address: DEFAULTS.temporalAddress, namespace: DEFAULTS.namespace, taskQueue: DEFAULTS.taskQueue, connection: { address: DEFAULTS.temporalAddress } };
  }
}
const env = clientConfig();
// `doctor` reports a bad configuration as one of its checks instead of stopping at it.
const LOADS_WORKER_CONFIG = new Set(['dev', 'demo', 'checkpoints', 'doctor', 'worker']);

const program = new Command()
  .name('tandem')
  .description('Durable hybrid HPC + AI pipelines on Temporal')
  .version(VERSION, '-V, --version', 'print the version of Tandem')
  .addOption(new Option('--address <host:port>', 'Temporal frontend (env: TEMPORAL_ADDRESS)').default(env.address))
  .addOption(new Option('--namespace <ns>', 'Temporal namespace (env: TEMPORAL_NAMESPACE)').default(env.namespace))
  .addOption(new Option('--task-queue <queue>', 'task queue of the Tandem workers (env: TANDEM_TASK_QUEUE)').default(env.taskQueue))
  .addOption(new Option('--profile <name>', 'temporal.toml profile: address, namespace, TLS, API key (env: TEMPORAL_PROFILE)'))
  .addOption(new Option('--log-format <format>', 'log lines as text or one JSON object a line (env: TANDEM_LOG_FORMAT; default text)').choices(['text', 'json']))
  .showHelpAfterError()
  .hook('preAction', (_program, action) => {
    if (envError && !LOADS_WORKER_CONFIG.has(action.name())) throw envError;
  });

/**
 * Where to connect: flags given on the command line win; then the profile (`--profile`, TEMPORAL_PROFILE)
 * with the TEMPORAL_* variables over it, as Temporal's own CLI resolves them; TLS, API key and gRPC
 * metadata come only from there.
 */
function target(): ClientConfig & { profile?: string } {
  const o = program.opts<{ address: string; namespace: string; taskQueue: string; profile?: string }>();
  const base = o.profile ? loadClientConfig(undefined, { profile: o.profile }) : env;
  const fromCli = (k: string) => program.getOptionValueSource(k) === 'cli';
  const address = fromCli('address') ? o.address : base.address;
  return { ...base, address, namespace: fromCli('namespace') ? o.namespace : base.namespace, taskQueue: o.taskQueue, connection: { ...base.connection, address }, profile: o.profile };
}

/** --log-format, when given (the worker's TANDEM_LOG_FORMAT otherwise). */
const logFormat = () => program.opts<{ logFormat?: 'text' | 'json' }>().logFormat;

/**
 * OpenTelemetry tracing for the commands that talk to Temporal, when OTEL_* turns it on (config/worker.ts):
 * a `tandem run`'s StartWorkflow span then parents the run's spans on the workers. The OTel SDK is
 * loaded only then; spans are flushed before the CLI exits (see the end of this file).
 */
let tracing: Promise<{ shutdown(): Promise<void> } | undefined> | undefined;
const startCliTracing = () =>
  (tracing ??= (async () => {
    const o = loadObserveConfig().tracing;
    return o ? (await import('../observe/tracing.js')).startTracing(o, 'tandem-cli') : undefined;
  })());

const connect = async (): Promise<TandemClient> => {
  const t = target();
  await startCliTracing();
  return (await sdk()).TandemClient.connect({ address: t.address, namespace: t.namespace, taskQueue: t.taskQueue, profile: t.profile });
};

program
  .command('validate <spec>')
  .description('check a pipeline spec (YAML or JSON) without running it (Argo Workflows YAML: `tandem argo lint`)')
  .addHelpText('after', '\nExamples:\n  tandem validate templates/examples/demo-pipeline.yaml\n  tandem argo lint my-workflow.yaml      # Argo Workflows YAML')
  .action(async (path: string) => {
    const spec = await (await sdk()).loadPipelineSpec(path);
    console.log(`${path}: valid pipeline "${spec.name}" (tenant ${spec.tenant}, qos ${spec.qos})`);
  });

program
  .command('run <spec>')
  .description('validate and launch a pipeline, then follow it until it ends')
  .option('--id <workflowId>', 'workflow id (default: <name>-<random>)')
  .option('--detach', 'print the run id and return at once')
  .option('--json', 'print progress as JSON lines, for scripts')
  .option('--failover [sites]', 'let training fail over between Slurm sites (the worker\'s TANDEM_SITES_FILE; optionally only these, comma-separated, in preference order)')
  .option('--failover-grace <duration>', 'how long a site may stay unreachable before its job is fenced and training moves (default 60s)')
  .option('--max-failovers <n>', 'failovers allowed before the train stage fails (default 3)')
  .option('--site-queue <site=queue>', "run a site's activities on its own workers' task queue (repeatable; not with --failover)", collectSiteQueue)
  .addHelpText('after', examples('tandem run my-pipeline.yaml  # validate, start, follow to the end', 'tandem run my-pipeline.yaml --detach  # then: tandem status <id> --follow', 'tandem run my-pipeline.yaml --json > progress.jsonl', 'tandem run my-pipeline.yaml --failover site-a,site-b  # training may move between Slurm sites'))
  .action(async (path: string, o: { id?: string; detach?: boolean; json?: boolean; siteQueue?: Record<string, string> } & FailoverFlags) => {
    const failover = failoverTuning(o);
    const spec = await (await sdk()).loadPipelineSpec(path);
    const client = await connect();
    try {
      const tuning = failover || o.siteQueue ? { ...(failover ? { failover } : {}), ...(o.siteQueue ? { siteQueues: o.siteQueue } : {}) } : undefined;
      const handle = await client.launch(spec, { id: o.id, tuning });
      if (o.detach) {
        console.log(o.json ? JSON.stringify({ id: handle.id }) : handle.id);
        return;
      }
      if (!o.json) console.log(`tandem: started ${handle.id} (Ctrl-C stops following, not the run; follow again with \`tandem status ${handle.id} --follow\`)`);
      await follow(handle, o.json);
    } finally {
      await client.close();
    }
  });

/** The progress display of `run` and `status --follow`: the timeline so far, then live, to the end. */
async function follow(handle: Awaited<ReturnType<TandemClient['get']>>, json?: boolean): Promise<void> {
  const printer = new ProgressPrinter();
  for await (const ev of handle.progress()) {
    if (json) console.log(JSON.stringify(ev));
    else if (ev.type === 'done') {
      console.log(formatStatus(ev.status));
      if (ev.status.phase !== 'completed') process.exitCode = 1;
    } else printer.handle(ev);
  }
}

program
  .command('status <id>')
  .description("show a run's stages, or its timeline; --follow re-attaches to it as `run` follows")
  .option('--timeline', 'print the timeline instead')
  .option('--follow', 'follow the run to its end with the progress display of `tandem run` (exit 1 unless it completes)')
  .option('--json', 'machine-readable output')
  .addHelpText('after', '\nExamples:\n  tandem status demo-3f2a\n  tandem status demo-3f2a --follow        # after run --detach or Ctrl-C\n  tandem status demo-3f2a --timeline --json')
  .action(async (id: string, o: { timeline?: boolean; follow?: boolean; json?: boolean }) => {
    const client = await connect();
    try {
      const h = await client.get(id);
      if (o.follow) {
        if (o.timeline) throw new Error('--follow prints the timeline as it happens; leave out --timeline');
        await follow(h, o.json);
      } else if (o.timeline) {
        const tl = await h.timeline();
        console.log(o.json ? JSON.stringify(tl, null, 2) : tl.map((e) => `${e.at}  ${(e.stage ?? 'pipeline').padEnd(10)} ${e.attempt ? `#${e.attempt} ` : ''}${e.message}`).join('\n'));
      } else {
        const st = await h.status();
        const live = st.stage === 'train' ? await h.liveProgress() : undefined;
        if (live) st.stages.train.progress = live.progress;
        console.log(o.json ? JSON.stringify(st, null, 2) : formatStatus(st));
      }
    } finally {
      await client.close();
    }
  });

program
  .command('cancel <id>')
  .description('cancel a run; its compensations (job cancel, teardown) run before it closes')
  .addHelpText('after', examples('tandem cancel demo-3f2a  # stops its jobs and removes its deployment (compensation)'))
  .action(async (id: string) => {
    const client = await connect();
    try {
      const h = await client.get(id);
      const { describeExecution } = await import('../sdk/list.js');
      const { status } = await describeExecution(client.client, id);
      if (status !== 'RUNNING') {
        console.error(`tandem: run ${id} is already closed (${status.toLowerCase().replace(/_/g, ' ')}); there is nothing to cancel`);
        process.exitCode = 1;
        return;
      }
      await h.cancel();
      console.log(`tandem: cancellation requested for ${id}; compensations run before it closes (follow with \`tandem status ${id} --follow\`)`);
    } finally {
      await client.close();
    }
  });

program
  .command('dev')
  .description('start a local Temporal dev server (with Web UI) and a Tandem worker')
  .option('--port <port>', 'frontend port', parsePort, DEFAULTS.devPort)
  .option('--ui-port <port>', 'Web UI port', parsePort, DEFAULTS.devUiPort)
  .option('--state <dir>', 'state directory (SQLite, local runtime); one `tandem dev` at a time', DEFAULTS.home)
  .option('--keep', 'on exit, leave the model servers this worker started running (`tandem deployments stop` stops them)')
  .addHelpText('after', '\nA port already in use is an error: `tandem dev` never attaches to a server it did not start.\nCtrl-C stops the worker, the dev server and (without --keep) the model servers its runs started.' + examples('tandem dev  # server on 127.0.0.1:7233, Web UI on :8233, a worker, state in .tandem', 'tandem dev --port 7300 --ui-port 8300 --state .tandem-2  # a second one beside the first'))
  .action(async (o: { port: number; uiPort: number; state: string; keep?: boolean }) => (await devCommands()).runDev({ port: o.port, uiPort: o.uiPort, state: o.state, keep: o.keep, logFormat: logFormat() }));

program
  .command('worker')
  .description('run a long-lived Tandem worker, configured from TEMPORAL_* and TANDEM_* (the same worker as `npm run worker` in a checkout)')
  // workers/main.ts is the worker's entry point: it reads the configuration (every problem at once, no
  // stack trace), serves /metrics when TANDEM_METRICS_PORT is set, and runs until SIGINT/SIGTERM.
  .action(async () => {
    await import('../workers/main.js');
  });

program
  .command('bundle <file>')
  .description("write the workers' workflow code, bundled, to a file: workers given it (TANDEM_WORKFLOW_BUNDLE) start polling without bundling")
  .option('--encrypted', 'for workers with payload keys (default: whether TANDEM_CODEC_* sets keys here)')
  .option('--tracing', 'for workers with tracing on (default: whether OTEL_* turns tracing on here)')
  .addHelpText('after', '\nA worker refuses a bundle of another Tandem version, or one built for other payload keys or tracing, and says what to rebuild.' + examples('tandem bundle /opt/tandem/workflows.js  # then TANDEM_WORKFLOW_BUNDLE=/opt/tandem/workflows.js tandem worker', 'tandem bundle --encrypted --tracing workflows.js  # on a build machine without the keys'))
  .action(async (file: string, o: { encrypted?: boolean; tracing?: boolean }) => (await import('./bundle.js')).runBundle(file, o));

program
  .command('demo [spec]')
  .description('run the example pipeline end to end on the embedded local runtime')
  .option('--keep', 'leave the model server, dev server and Web UI running afterwards')
  .addHelpText('after', examples('tandem demo  # the demo pipeline on a dev server it starts and stops', 'tandem demo --keep  # leave the model server, dev server and Web UI running'))
  .action(async (spec: string | undefined, o: { keep?: boolean }) => (await devCommands()).runDemo({ spec, keep: o.keep, logFormat: logFormat() }));

const connectArgo = async () => {
  // The SDK's client: the same connection settings (TLS, API key or refreshed OIDC token), payload codec
  // (TANDEM_CODEC_*: Argo runs are encrypted alike) and tracing as every other command.
  const [tandem, { ArgoClient }] = await Promise.all([connect(), import('../argo/client.js')]);
  // TANDEM_HOME: where a large run's child workflows keep their node status (docs/argo-scale.md).
  return ArgoClient.over(tandem.client, tandem.taskQueue, () => tandem.close(), { home: loadCliConfig().home });
};
program
  .command('completion <shell>')
  .description('print a shell completion script: bash or zsh')
  .addHelpText('after', '\nExamples:\n  source <(tandem completion bash)     # in ~/.bashrc\n  source <(tandem completion zsh)      # in ~/.zshrc')
  .action(async (shell: string) => {
    if (shell !== 'bash' && shell !== 'zsh') throw new Error(`completion: shell must be bash or zsh, not ${JSON.stringify(shell)}`);
    const { commandTree, bashScript, zshScript } = await import('./completion.js');
    const tree = await commandTree(program, { connect, connectArgo, target });
    process.stdout.write(shell === 'bash' ? bashScript(tree) : zshScript(tree));
  });

registerCommandGroups(program, process.argv.slice(2), { connect, connectArgo, target })
  .then(() => program.parseAsync())
  .then(async () => (await tracing)?.shutdown())
  .catch((err: unknown) => {
    printError(err);
    process.exit(2);
  });
