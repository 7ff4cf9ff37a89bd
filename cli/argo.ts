// `tandem argo …`: lint, submit (-p k=v, --watch), list, get, logs, retry, resubmit, resume, stop.
// Output follows Argo's CLI: a node tree with phases and durations.
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { InputError, formatIssue } from '../contract/input-error.js';
import { lintFile, lintKinds, yamlFilesUnder } from '../argo/lint/validate.js';
import { notApplied } from '../argo/lint/runnable.js';
import { ArgoClient, prepareAll, templateLibrary, localJobDir } from '../argo/client.js';
import { ArgoValidationError, type ArgoIssue } from '../argo/lint/load.js';
import { PHASES, type ArgoNode, type ArgoStatus } from '../argo/lang/types.js';
import { printError } from './errors.js';
import { useArgoSchema } from '../argo/lint/schema.js';
import { loadCliConfig } from '../config/worker.js';
import { registerExecutorPluginCommands } from './argo-plugin.js';
import { parseSelector } from '../argo/retry.js';
import { examples } from './help.js';

/** A path that names a directory (a missing one is a file whose lint says it cannot be read). */
const isDirectory = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Lint notes (what Argo accepts but reads otherwise than written), on stderr as `file:line: path: note: …`. */
const printNotes = (notes: ArgoIssue[]): void => notes.forEach((n) => console.error(formatIssue({ ...n, message: `note: ${n.message}` })));

/** TANDEM_HOME and TANDEM_ARGO_SCHEMA, read when a command needs them (config/worker.ts). */
function cliConfig() {
  const c = loadCliConfig();
  useArgoSchema(c.argoSchemaFile);
  return c;
}

const ICON: Record<string, string> = { Succeeded: '✔', Failed: '✖', Error: '⚠', Running: '●', Pending: '◷', Skipped: '○', Omitted: '○' };

function secs(n: { startedAt?: string; finishedAt?: string }): string {
  if (!n.startedAt) return '';
  const ms = (n.finishedAt ? Date.parse(n.finishedAt) : Date.now()) - Date.parse(n.startedAt);
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}

/** What `argo get` shows of the tree: Argo's `--status`, `--node-field-selector` and `-o short`. */
export interface TreeView {
  /** Only nodes in this phase: a filtered view is a flat list of the matching nodes, in tree order. */
  status?: string;
  /** Only nodes this `key=value` selects (argo/retry.ts parseSelector). */
  selector?: ReturnType<typeof parseSelector>;
  /** The summary without the tree, for a run of thousands of nodes. */
  short?: boolean;
}

/** Argo's progress (workflow/progress): each pod 1/1 once it finished (whatever its phase), 0/1 before. */
function progress(st: ArgoStatus): string {
  const pods = Object.values(st.nodes).filter((n) => n.type === 'Pod');
  return `${pods.filter((n) => n.phase !== 'Pending' && n.phase !== 'Running').length}/${pods.length}`;
}

/** The node tree Argo's `argo get` prints. */
export function formatTree(st: ArgoStatus, view: TreeView = {}): string {
  const lines = [`Name:                ${st.name}`, `Status:              ${st.phase}`, ...(st.message ? [`Message:             ${st.message}`] : []), `Started:             ${st.startedAt}`, ...(st.finishedAt ? [`Finished:            ${st.finishedAt}`] : []), `Duration:            ${secs(st)}`, `Progress:            ${progress(st)}`];
  if (view.short) return lines.join('\n');
  lines.push('', `${'STEP'.padEnd(48)} TEMPLATE                 PODNAME                                   DURATION  MESSAGE`);
  const shown = (n: ArgoNode) => (view.status === undefined || n.phase === view.status) && (view.selector === undefined || n[view.selector.key] === view.selector.value);
  const filtered = view.status !== undefined || view.selector !== undefined;
  const walk = (n: ArgoNode, prefix: string, last: boolean, root: boolean) => {
    const skip = n.type === 'StepGroup' || !shown(n);
    if (!skip) {
      const label = `${root || filtered ? '' : prefix + (last ? '└─ ' : '├─ ')}${ICON[n.phase] ?? '?'} ${n.displayName}`;
      lines.push(`${label.padEnd(48)} ${(n.templateName ?? '').padEnd(24)} ${(n.type === 'Pod' ? n.id : '').padEnd(41)} ${secs(n).padEnd(9)} ${n.message ?? ''}`.trimEnd());
    }
    const kids = n.children.map((c) => st.nodes[c]).filter((c): c is ArgoNode => !!c);
    const next = skip ? prefix : root ? '' : prefix + (last ? '   ' : '│  ');
    kids.forEach((k, i) => walk(k, next, i === kids.length - 1, false));
  };
  const root = st.nodes[st.name];
  if (root) walk(root, '', true, true);
  const exit = st.nodes[`${st.name}.onExit`] ?? Object.values(st.nodes).find((n) => n.name === `${st.name}.onExit`);
  if (exit) walk(exit, '', true, true);
  return lines.join('\n');
}

/** `argo get`'s options as a TreeView, refused with the flag's name before anything is read. */
export function treeView(o: { output?: string; status?: string; nodeFieldSelector?: string }): TreeView & { json: boolean } {
  if (o.output !== undefined && o.output !== 'json' && o.output !== 'short') throw new Error(`-o ${o.output}: json or short`);
  if (o.status !== undefined && !(PHASES as readonly string[]).includes(o.status)) throw new Error(`--status ${o.status}: one of ${PHASES.join(', ')}`);
  if (o.output === 'json' && (o.status !== undefined || o.nodeFieldSelector !== undefined)) throw new Error('--status and --node-field-selector apply to the node tree, not -o json');
  return { json: o.output === 'json', short: o.output === 'short', status: o.status, selector: o.nodeFieldSelector === undefined ? undefined : parseSelector(o.nodeFieldSelector, '--node-field-selector') };
}

function parseParams(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new Error(`-p expects key=value, got ${JSON.stringify(kv)}`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

export function registerArgoCommands(program: Command, connect: () => Promise<ArgoClient>, opts: { home?: string } = {}): Command {
  const argo = program.command('argo').description('run Argo Workflows YAML unchanged on Tandem');
  const withClient = async <T>(fn: (c: ArgoClient) => Promise<T>): Promise<T> => {
    const c = await connect();
    try {
      return await fn(c);
    } finally {
      await c.close();
    }
  };

  argo
    .command('lint <files...>')
    .description("validate with Argo's schema and semantic rules; exits non-zero on errors")
    .option('--templates <dir...>', 'directories of WorkflowTemplates that templateRef may name')
    .option('--kinds <kinds>', 'lint only these kinds, comma-separated, as argo lint takes them: workflows (wf), workflowtemplates (wftmpl), cronworkflows (cronwf), clusterworkflowtemplates (cwftmpl), or all (the default)', (v: string) => {
      try {
        return lintKinds([v]);
      } catch (e) {
        throw new InvalidArgumentError((e as Error).message);
      }
    })
    .addHelpText('after', examples('tandem argo lint workflow.yaml templates/*.yaml', 'tandem argo lint --kinds workflows,cronworkflows manifests/'))
    .action((args: string[], o: { templates?: string[]; kinds?: Set<string> }) => {
      cliConfig();
      const kinds = o.kinds;
      // A directory is its YAML files, recursively; templateRefs resolve from every file given (as
      // `argo lint --offline` resolves them from its arguments), whatever their order.
      const files = args.flatMap((a) => (isDirectory(a) ? yamlFilesUnder(a) : [a]));
      const library = templateLibrary(o.templates).addFiles(files);
      let bad = 0;
      let linted = 0;
      for (const f of files) {
        const r = lintFile(f, { library, kinds });
        // Among several files, one that holds only other kinds (a ConfigMap beside the workflows) is
        // passed over, as `argo lint` does; only when no file holds anything to lint is that an error.
        if (r.nothingToLint && files.length > 1) {
          console.error(`${f}: note: ${r.issues[0]!.message}: nothing to lint`);
          continue;
        }
        linted++;
        if (r.issues.length === 0) {
          console.log(`${f}: no linting errors found`);
          printNotes(r.notes);
          // Valid for Argo, but not all of it applies here: said, not ignored.
          for (const d of r.documents.filter((x) => x.kind === 'Workflow' || x.kind === 'CronWorkflow')) {
            const spec = (d.value.spec ?? {}) as Record<string, unknown>;
            for (const note of notApplied(d.kind === 'CronWorkflow' ? ((spec.workflowSpec ?? {}) as Record<string, unknown>) : spec)) console.error(`${f}: note: ${note}`);
          }
        }
        else {
          bad++;
          for (const i of r.issues) console.error(formatIssue(i));
        }
      }
      if (files.length !== 1 && linted === 0) {
        console.error(`tandem: found nothing to lint in ${args.join(' ')}: ${files.length ? 'no file holds an Argo Workflows manifest' : 'no .yaml or .yml file there'}`);
        bad++;
      }
      if (bad) process.exitCode = 1;
    });

  argo
    .command('submit <file>')
    .description('lint, then start a Workflow (or a CronWorkflow schedule)')
    .option('-p, --parameter <k=v>', 'workflow parameter', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--templates <dir...>', 'directories of WorkflowTemplates')
    .option('--name <name>', 'workflow name')
    .option('--watch', 'follow the run until it ends')
    .addHelpText('after', examples('tandem argo submit workflow.yaml --watch', 'tandem argo submit workflow.yaml -p message=hi --templates ./workflow-templates'))
    .action(async (file: string, o: { parameter: string[]; templates?: string[]; name?: string; watch?: boolean }) => {
      const parameters = parseParams(o.parameter);
      cliConfig();
      let all;
      try {
        all = prepareAll(file, { parameters, templateDirs: o.templates });
        if (o.name && all.length > 1) throw new ArgoValidationError([{ source: file, path: '', message: `--name names one workflow, but ${file} has ${all.length} to submit` }]);
      } catch (e) {
        if (e instanceof InputError) {
          printError(e);
          process.exitCode = 1;
          return;
        }
        throw e;
      }
      printNotes(all[0]?.lint.notes ?? []);
      for (const p of all) {
        const spec = (p.doc.spec ?? {}) as Record<string, unknown>;
        for (const note of notApplied(p.doc.kind === 'CronWorkflow' ? ((spec.workflowSpec ?? {}) as Record<string, unknown>) : spec)) console.error(`note: ${note}`);
      }
      await withClient(async (c) => {
        // Every document of the file, as `argo submit` does; all start before any is watched.
        const started = [];
        for (const p of all) {
          const s = await c.submit(p, { parameters, name: o.name });
          console.log(s.schedule ? `CronWorkflow ${s.id} scheduled` : `Name: ${s.id}\nStatus: Pending`);
          started.push(s);
        }
        if (!o.watch) return;
        for (const { id, schedule } of started) {
          if (schedule) continue;
          const st = await c.wait(id);
          console.log(formatTree(st));
          if (st.phase !== 'Succeeded') process.exitCode = 1;
        }
      });
    });

  argo.command('list').description('list Argo workflows').action(() =>
    withClient(async (c) => {
      const rows = await c.list(); // before the header: an error is the only output
      console.log(`${'NAME'.padEnd(40)} ${'STATUS'.padEnd(12)} AGE`);
      for (const w of rows) console.log(`${w.name.padEnd(40)} ${w.status.padEnd(12)} ${Math.round((Date.now() - w.startTime.getTime()) / 1000)}s`);
    }),
  );

  argo
    .command('get <name>')
    .option('-o, --output <fmt>', "json: the Workflow with Argo's status (nodes by id: type, phase, templateName, boundaryID, children, outputs); short: the summary without the node tree")
    .option('--status <phase>', 'only nodes in this phase (Pending, Running, Succeeded, Skipped, Failed, Error, Omitted)')
    .option('--node-field-selector <key=value>', 'only the nodes it selects: displayName=, name=, templateName= or id=')
    .description('show the node tree')
    .addHelpText('after', examples('tandem argo get hello-x7k2  # the node tree', 'tandem argo get big-loop-4f2a1 --status Failed  # only the failed nodes of a large run', 'tandem argo get big-loop-4f2a1 -o short  # status and progress only', "tandem argo get hello-x7k2 -o json  # the Workflow with Argo's status"))
    .action((name: string, o: { output?: string; status?: string; nodeFieldSelector?: string }) =>
      withClient(async (c) => {
        const view = treeView(o);
        const st = await c.status(name);
        if (!view.json) return console.log(formatTree(st, view));
        const { argoShape } = await import('../argo/status-shape.js');
        const input = await c.input(name);
        console.log(JSON.stringify(argoShape(st, input.spec, input.namespace ?? 'default'), null, 2));
      }),
    );

  argo
    .command('logs <name>')
    .description("print the pods' output (local runtime)")
    .option('--home <dir>', "the workers' TANDEM_HOME, where local pods keep their output (default: $TANDEM_HOME, or .tandem; `tandem dev`: its --state)")
    .addHelpText('after', examples('tandem argo logs hello-world-x7k2q', 'tandem argo logs hello-world-x7k2q --home .tandem-2   # a run of `tandem dev --state .tandem-2`'))
    .action((name: string, o: { home?: string }) =>
      withClient(async (c) => {
        const st = await c.status(name);
        const home = o.home ?? opts.home ?? cliConfig().home;
        const pods = Object.values(st.nodes).filter((x) => x.type === 'Pod' && x.jobName);
        let found = 0;
        for (const n of pods) {
          const f = join(localJobDir(home, n.jobName!), 'stdout');
          if (!existsSync(f)) continue;
          found++;
          for (const line of readFileSync(f, 'utf8').split('\n').filter(Boolean)) console.log(`${n.id}: ${line}`);
        }
        // Nothing found is said, not printed as an empty log: the usual cause is another home.
        if (pods.length && !found) {
          console.error(`tandem: no output of ${name}'s ${pods.length} pod(s) under ${home}: its pods ran on a worker with another TANDEM_HOME (\`tandem dev --state DIR\`: pass --home DIR), or not on the local runtime (Slurm: the job's output file; Kubernetes: kubectl logs)`);
          process.exitCode = 1;
        }
      }),
    );

  argo
    .command('retry <name>')
    .description('run a finished workflow again under its name: successful nodes are reused, failed ones re-run')
    .option('--restart-successful', 'also re-run the successful nodes the selector names (with their DAG dependencies and what follows them)')
    .option('--selector <key=value>', 'node selector, e.g. displayName=train (Argo: --node-field-selector)')
    .action((name: string, o: { restartSuccessful?: boolean; selector?: string }) =>
      withClient(async (c) => {
        const { plan } = await c.retry(name, o);
        console.log(`Name: ${name}`);
        console.log(`Reused: ${Object.keys(plan.reuse).length} successful node(s)`);
        for (const r of plan.restarted) console.log(`Restarted: ${r.name} (${r.why})`);
      }),
    );
  argo.command('resubmit <name>').description('run a workflow again under a new name').action((name: string) => withClient(async (c) => console.log(`Name: ${await c.resubmit(name)}`)));
  argo
    .command('resume <name>')
    .option('--node-field-selector <node>', 'only nodes whose name contains this')
    .option('-p, --parameter <k=v>', 'supplied output parameter', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .action((name: string, o: { nodeFieldSelector?: string; parameter: string[] }) => withClient((c) => c.resume(name, o.nodeFieldSelector, parseParams(o.parameter))));
  argo.command('stop <name>').option('--message <m>').action((name: string, o: { message?: string }) => withClient((c) => c.stop(name, o.message)));
  registerExecutorPluginCommands(argo);
  return argo;
}
