// `tandem runs …`: operators list, inspect, replay, retry, resume and export pipeline runs.
import { writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Runs, type RunStatusFilter, type RunSummary } from '../sdk/runs.js';
import type { RunReport } from '../sdk/history.js';
import { loadPipelineSpec, type TandemClient } from '../sdk/client.js';
import { historyFromFile, replayHistory, type ReplayVerdict } from '../workers/replay.js';
import { elapsed } from './render.js';
import { ArgoClient, ARGO_WORKFLOW_TYPE, ID_PREFIX } from '../argo/client.js';
import { formatTree } from './argo.js';
import { parseDuration } from '../contract/duration.js';
import { DEFAULTS } from '../config/defaults.js';
import { parseJsonLimited } from '../contract/limits.js';
import { examples } from './help.js';

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (cell ?? '').padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}

const when = (d?: Date) => (d ? d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-');

export function formatRunList(runs: RunSummary[]): string {
  if (runs.length === 0) return 'no runs match';
  return table([
    ['ID', 'TYPE', 'TENANT', 'STATUS', 'STAGE', 'STARTED', 'DURATION'],
    ...runs.map((r) => [r.id, r.type, r.tenant ?? '-', r.status, r.status === 'FAILED' ? `${r.stage ?? '-'} (failed)` : (r.stage ?? '-'), when(r.startedAt), elapsed(r.durationMs)]),
  ]);
}

export function formatRunReport(r: RunReport & { runId: string }): string {
  const dur = (a?: Date, b?: Date) => (a && b ? elapsed(b.getTime() - a.getTime()) : '-');
  const lines = [
    `Run        ${r.workflowId} (run ${r.runId})`,
    `Type       ${r.type}${r.input?.spec ? `   pipeline ${r.input.spec.name}, tenant ${r.input.spec.tenant}, qos ${r.input.spec.qos}` : ''}`,
    `Status     ${r.status}   started ${when(r.startedAt)}   duration ${dur(r.startedAt, r.closedAt ?? new Date())}`,
  ];
  if (r.input?.resume) lines.push(`Resumes    ${r.input.resume.from} (reusing ${r.input.resume.reuse.join(', ') || 'nothing'})`);
  if (r.failure) lines.push(`Failure    ${r.failure.split('\n')[0]}`);
  lines.push('', table([
    ['STAGE', 'STATUS', 'ATTEMPTS', 'JOBS', 'DURATION'],
    ...r.stages.map((s) => [s.name, s.status, String(s.attempts), s.jobs.map((j) => `${j.runtime}:${j.jobId}${j.state ? `=${j.state}` : ''}`).join(' ') || '-', dur(s.startedAt, s.finishedAt)]),
  ]));
  lines.push('', 'Activities');
  lines.push(table([
    ['#', 'ACTIVITY', 'STAGE', 'TRY', 'OUTCOME', 'DURATION', 'DETAIL'],
    ...r.activities.map((a) => [String(a.scheduledEventId), a.compensation ? `↶ ${a.type}` : a.type, a.stage ?? '-', String(a.attempt), a.outcome, dur(a.scheduledAt, a.closedAt), a.error ? `${a.errorType ? `[${a.errorType}] ` : ''}${a.error.split('\n')[0]!.slice(0, 100)}` : '']),
  ]));
  return lines.join('\n');
}

export function formatVerdict(v: ReplayVerdict, name: string): string {
  if (v.failed) return `${name}: replay FAILED — ${v.failed.replace(/\.$/, '')}.\nThis is not a verdict on determinism: fix the history (or the error in the workflow code) and replay again.`;
  if (v.deterministic) return `${name}: deterministic — ${v.events} events of ${v.workflowType} replay on the current code`;
  return `${name}: NOT deterministic — ${v.explanation}${v.eventId ? ` (event ${v.eventId})` : ''}.\nGuard the change with patched() (see docs/testing.md, "Replay of recorded histories"), or keep the old code path until such runs have closed.`;
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    return parseJsonLimited(text); // depth and size first (contract/limits.ts)
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`);
  }
}

export function registerRunsCommands(program: Command, connect: () => Promise<TandemClient>, connectArgo?: () => Promise<ArgoClient>): void {
  const runs = program.command('runs').description('inspect, replay, retry and resume runs (operators)');
  const withRuns = async <T>(fn: (r: Runs) => Promise<T>): Promise<T> => {
    const client = await connect();
    try {
      return await fn(new Runs(client));
    } finally {
      await client.close();
    }
  };

  runs
    .command('list')
    .description('runs from Temporal visibility, newest first')
    .option('--status <status>', 'failed | running | completed | cancelled | terminated | timed-out')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--pipeline <name>', "only this pipeline (the spec's name)")
    .option('--since <when>', 'started within a duration (24h, 7d) or since a date')
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('tandem runs list --status failed --since 24h', 'tandem runs list --tenant acme --pipeline my-model --json'))
    .action((o: { status?: RunStatusFilter; tenant?: string; pipeline?: string; since?: string; limit: string; json?: boolean }) =>
      withRuns(async (r) => {
        const list = await r.list({ status: o.status, tenant: o.tenant, pipeline: o.pipeline, since: o.since, limit: Number(o.limit) });
        console.log(o.json ? JSON.stringify(list, null, 2) : formatRunList(list));
      }),
    );

  runs
    .command('show <id>')
    .description("a run's timeline from its history: stages, attempts, jobs, errors, compensations")
    .option('--json', 'machine-readable output')
    .option('--svg <file>', 'also write the timeline as an SVG picture (stages and their activities over time)')
    .addHelpText('after', examples('tandem runs show demo-3f2a  # stages, attempts, jobs, errors, compensations', 'tandem runs show demo-3f2a --svg timeline.svg'))
    .action((id: string, o: { json?: boolean; svg?: string }) =>
      withRuns(async (r) => {
        if ((await r.typeOf(id)) === ARGO_WORKFLOW_TYPE && connectArgo) {
          const argo = await connectArgo();
          try {
            const st = await argo.wait(id.replace(ID_PREFIX, '')).catch(() => argo.status(id.replace(ID_PREFIX, '')));
            console.log(o.json ? JSON.stringify(st, null, 2) : formatTree(st));
          } finally {
            await argo.close();
          }
          return;
        }
        const report = await r.show(id);
        console.log(o.json ? JSON.stringify(report, null, 2) : formatRunReport(report));
        if (o.svg) {
          const { timelineSvg } = await import('./timeline-svg.js');
          writeFileSync(o.svg, timelineSvg(report));
          if (!o.json) console.log(`timeline written to ${o.svg}`);
        }
      }),
    );

  runs
    .command('replay [id]')
    .description('replay a run (or an exported history file) against the current workflow code')
    .option('--file <history.json>', 'replay an exported history instead of fetching one')
    .option('--workflow-id <id>', "with --file: the run's workflow id (child workflow ids derive from it)")
    .option('--timeout <duration>', 'fail a replay that has not finished within this long', `${DEFAULTS.replayTimeoutMs / 1000}s`)
    .addHelpText('after', examples("tandem runs replay demo-3f2a  # does this worker's code still replay the run?", 'tandem runs replay --file demo-3f2a.json --workflow-id demo-3f2a'))
    .action(async (id: string | undefined, o: { file?: string; workflowId?: string; timeout: string }) => {
      // Everything is checked before the replayer starts: the timeout, then the history's shape.
      const timeoutMs = parseDuration(o.timeout);
      if (timeoutMs === undefined || timeoutMs <= 0) throw new Error(`--timeout ${JSON.stringify(o.timeout)} is not a duration such as 90s or 5m`);
      let history;
      if (o.file) history = historyFromFile(await readJson(o.file), o.file);
      // The fetched history as it is: decoded proto objects, no JSON round trip (sdk/history-json.ts).
      else if (id) history = (await withRuns((r) => r.history(id))).history;
      else throw new Error('give a run id or --file <history.json>');
      Runtime.install({ logger: new DefaultLogger('ERROR') });
      const verdict: ReplayVerdict = await replayHistory(history, { workflowId: o.workflowId ?? id, timeoutMs });
      console.log(formatVerdict(verdict, o.file ?? id!));
      if (!verdict.deterministic) process.exitCode = 1;
      // A stalled replayer keeps running inside the SDK and would hold the process open.
      if (verdict.failed) process.exit(1);
    });

  runs
    .command('retry <id>')
    .description('retry in place from the failed stage (or --node); earlier stages are not re-run')
    .option('--node <stage-or-node>', 'pipelines: the stage to re-run from (preprocess | train | checkpoint | deploy); Argo runs: a node to re-run')
    .option('--restart-successful', 'Argo runs: also re-run the successful nodes the selector names, with their DAG dependencies')
    .option('--selector <key=value>', 'Argo runs: node selector, e.g. displayName=train')
    .addHelpText('after', examples('tandem runs retry demo-3f2a --node train  # from the train stage, its checkpoints kept', 'tandem runs retry hello-x7k2 --selector displayName=train  # an Argo run'))
    .action((id: string, o: { node?: string; restartSuccessful?: boolean; selector?: string }) =>
      withRuns(async (r) => {
        if ((await r.typeOf(id)) === ARGO_WORKFLOW_TYPE && connectArgo) {
          const argo = await connectArgo();
          try {
            const selector = o.selector ?? (o.node ? `displayName=${o.node}` : undefined);
            const { plan } = await argo.retry(id.replace(ID_PREFIX, ''), { restartSuccessful: o.restartSuccessful ?? o.node !== undefined, selector });
            console.log(`tandem: ${id} retrying; reusing ${Object.keys(plan.reuse).length} successful node(s)${plan.restarted.length ? `; re-running ${plan.restarted.map((x) => `${x.name} (${x.why})`).join(', ')}` : ''}`);
          } finally {
            await argo.close();
          }
          return;
        }
        const res = await r.retry(id, { node: o.node });
        const extra = res.from !== res.requested ? ` (from ${res.from}: the failed run's compensation undid it)` : '';
        console.log(`tandem: ${id} retrying from ${res.requested}${extra}; new run ${res.runId}. Follow with \`tandem status ${id}\`.`);
      }),
    );

  runs
    .command('resume <id>')
    .description('a new run that reuses the completed stages and restores training from the latest checkpoint')
    .option('--spec <file>', 'a corrected spec for the same pipeline')
    .option('--id <newId>', 'workflow id of the new run')
    .addHelpText('after', examples('tandem runs resume demo-3f2a --spec fixed.yaml  # a corrected spec, same data and checkpoints'))
    .action((id: string, o: { spec?: string; id?: string }) =>
      withRuns(async (r) => {
        const spec = o.spec ? await loadPipelineSpec(o.spec) : undefined;
        const handle = await r.resume(id, { spec, newId: o.id });
        console.log(`tandem: resumed ${id} as ${handle.id}. Follow with \`tandem status ${handle.id}\`.`);
      }),
    );

  runs
    .command('export <id>')
    .description('write the history as JSON (a replay fixture: copy it into test/histories/)')
    .requiredOption('--out <file>', 'output file')
    .addHelpText('after', examples("tandem runs export demo-3f2a --out demo-3f2a.json  # for runs replay --file, or the Web UI's import"))
    .action((id: string, o: { out: string }) =>
      withRuns(async (r) => {
        await writeFile(o.out, await r.export(id));
        console.log(`tandem: wrote ${o.out}; add it to the replay suite with \`cp ${o.out} test/histories/\``);
      }),
    );
}
