// `npm run bench:argo-scale`: Argo workflows as large as Argo runs (#31, docs/argo-scale.md), the way a
// user runs them: a Temporal dev server, Tandem's worker as its own process (`tandem worker`,
// workers/main.ts) and `tandem argo submit`'s client, trivial `echo` pods on the local target (each in
// its bubblewrap sandbox). Cases: withSequence loops and nested DAGs (n³ leaves). Prints per case wall
// time, pods/s, workflow count (the run and its argoSlice children), the largest history's event count
// and bytes, and the worker's largest RSS while the run runs (one worker process per case, sampled every
// 250 ms; the clock starts once it polls); and the goals: 10,000 and
// 27,000 complete, wall time per pod at 10,000 within 1.5× that at 1,000, worker RSS ≤ 1 GB at 27,000.
// Usage: npm run bench:argo-scale -- [case…]   cases: loop:<n>, dag:<n> (default: loop:100 loop:1000
// loop:10000 loop:50000 dag:10 dag:30); CI's small variant: npm run bench:argo-scale -- loop:100 dag:5
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArgoClient, prepare } from '../argo/client.js';
import type { ArgoStatus } from '../argo/lang/types.js';
import { describeExecution } from '../sdk/list.js';
import { startDevServer } from '../workers/dev-server.js';

const cases = process.argv.slice(2).length ? process.argv.slice(2) : ['loop:100', 'loop:1000', 'loop:10000', 'loop:50000', 'dag:10', 'dag:30'];
for (const c of cases) if (!/^(loop|dag):\d+$/.test(c)) throw new Error(`unknown case ${c}: loop:<n> or dag:<n>`);

const POD = `container: {image: alpine, command: [sh, -c, "echo {{inputs.parameters.x}}"]}`;
function spec(c: string): { yaml: string; pods: number } {
  const [kind, n] = [c.split(':')[0], Number(c.split(':')[1])];
  if (kind === 'loop') {
    return {
      pods: n,
      yaml: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loop-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: loop, template: echo, withSequence: {count: "${n}"}, arguments: {parameters: [{name: x, value: "{{item}}"}]}}
  - name: echo
    inputs: {parameters: [{name: x}]}
    ${POD}
`,
    };
  }
  const tasks = (tmpl: string, value: string) => Array.from({ length: n }, (_, i) => `      - {name: t${i}, template: ${tmpl}, arguments: {parameters: [{name: x, value: "${value}${i}"}]}}`).join('\n');
  return {
    pods: n ** 3,
    yaml: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: dag-}
spec:
  entrypoint: l1
  templates:
  - name: l1
    dag:
      tasks:
${tasks('l2', '')}
  - name: l2
    inputs: {parameters: [{name: x}]}
    dag:
      tasks:
${tasks('l3', '{{inputs.parameters.x}}-')}
  - name: l3
    inputs: {parameters: [{name: x}]}
    dag:
      tasks:
${tasks('echo', '{{inputs.parameters.x}}-')}
  - name: echo
    inputs: {parameters: [{name: x}]}
    ${POD}
`,
  };
}

const rss = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};

/** Until the worker polls the task queue (its workflow bundle built): the clock starts after. */
async function pollerReady(client: ArgoClient, taskQueue: string): Promise<void> {
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const d = await client.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 });
    if (d.pollers?.length) return;
  }
  throw new Error(`no worker polls ${taskQueue} after 300 s`);
}

const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-argo-scale-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });
const rows: { c: string; pods: number; wallS: number; phase: string; workflows: number; maxEvents: number; maxBytes: number; rssMB: number; nodes: number }[] = [];
try {
  for (const c of cases) {
    const { yaml, pods } = spec(c);
    const home = join(dir, c.replace(':', '-'));
    const taskQueue = `bench-argo-${c.replace(':', '-')}`;
    const logFd = openSync(join(dir, `${c.replace(':', '-')}.worker.log`), 'w');
    // Tandem's worker, as `tandem worker` runs it (one process per case, so its peak RSS is this case's).
    const worker = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../workers/main.ts', import.meta.url))], {
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, TANDEM_TASK_QUEUE: taskQueue, TANDEM_HOME: home, TANDEM_LOG_LEVEL: 'WARN' },
      // Its log (the SDK's warnings: slow or timed-out workflow tasks) is kept beside the case and
      // printed when the case does not succeed.
      stdio: ['ignore', logFd, 'inherit'],
    });
    closeSync(logFd); // the worker holds its own copy
    const workerLog = () => readFileSync(join(dir, `${c.replace(':', '-')}.worker.log`), 'utf8').trimEnd().split('\n').slice(-40).join('\n');
    const client = await ArgoClient.connect({ address: server.address, taskQueue, home });
    try {
      await pollerReady(client, taskQueue);
      // The worker's resident memory while the run runs (sampled), not its peak while bundling.
      let peak = rss(worker.pid!);
      const sampler = setInterval(() => (peak = Math.max(peak, rss(worker.pid!))), 250);
      const t0 = Date.now();
      const { id } = await client.submit(prepare(`${c}.yaml`, { text: yaml }));
      const st: ArgoStatus = await client.wait(id);
      const wallS = (Date.now() - t0) / 1000;
      clearInterval(sampler);
      const ids = [`argo-${id}`, ...(st.slices ?? [])];
      let maxEvents = 0;
      let maxBytes = 0;
      for (const wid of ids) {
        const raw = (await client.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: wid } })).workflowExecutionInfo;
        maxEvents = Math.max(maxEvents, Number(raw?.historyLength ?? 0));
        maxBytes = Math.max(maxBytes, Number(raw?.historySizeBytes ?? 0));
      }
      void describeExecution;
      const ran = Object.values(st.nodes).filter((n) => n.type === 'Pod' && n.phase === 'Succeeded').length;
      rows.push({ c, pods, wallS, phase: ran === pods ? st.phase : `${st.phase} (${ran}/${pods} pods)`, workflows: ids.length, maxEvents, maxBytes, rssMB: peak / 2 ** 20, nodes: Object.keys(st.nodes).length });
      // Each row as it is measured, so that a run cut short still reports what it finished.
      const r = rows[rows.length - 1]!;
      if (r.phase !== 'Succeeded') console.log(`${c}: the worker's last log lines:\n${workerLog()}`);
      console.log(`${c}: ${r.phase} in ${wallS.toFixed(1)} s, ${(pods / wallS).toFixed(1)} pods/s, ${r.workflows} workflows, max ${r.maxEvents} events / ${(r.maxBytes / 1e6).toFixed(2)} MB, worker RSS ${r.rssMB.toFixed(0)} MB`);
    } catch (e) {
      console.log(`${c}: failed (${(e as Error).message}); the worker's last log lines:\n${workerLog()}`);
      throw e;
    } finally {
      await client.close();
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
    }
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

const perPod = (c: string) => {
  const r = rows.find((x) => x.c === c);
  return r ? r.wallS / r.pods : undefined;
};
console.log('\n| case | pods | phase | wall time | pods/s | workflows | events (max) | history bytes (max) | worker RSS |');
console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.c} | ${r.pods} | ${r.phase} | ${r.wallS.toFixed(1)} s | ${(r.pods / r.wallS).toFixed(1)} | ${r.workflows} | ${r.maxEvents} | ${(r.maxBytes / 1e6).toFixed(2)} MB | ${r.rssMB.toFixed(0)} MB |`);
const p1k = perPod('loop:1000');
const p10k = perPod('loop:10000');
if (p1k && p10k) console.log(`\nwall time per pod, 10,000 vs 1,000: ${(p10k / p1k).toFixed(2)}× (goal ≤ 1.5×)`);
const d30 = rows.find((r) => r.c === 'dag:30');
if (d30) console.log(`27,000 leaves: ${d30.phase}, worker RSS ${d30.rssMB.toFixed(0)} MB (goal ≤ 1024 MB)`);
const l10k = rows.find((r) => r.c === 'loop:10000');
if (l10k) console.log(`10,000 items: ${l10k.phase}`);
console.log(`largest history: ${Math.max(...rows.map((r) => r.maxEvents))} events, ${(Math.max(...rows.map((r) => r.maxBytes)) / 1e6).toFixed(2)} MB (Temporal's limits: 51,200 events / 50 MB; goal ~10k / ~10 MB)`);
