// Argo conformance, measured: every file of Argo's own examples through `tandem argo lint`; every
// example this host can run (its interpreters and tools exist, no Kubernetes-only feature, no network)
// is run on a real Temporal dev server + local worker and must reach the phase Argo's controller
// reaches, derived from the workflow's content by ./expected-phase.ts (a small model of Argo's steps,
// DAG and pod semantics, independent of Tandem's interpreter). Examples whose outcome depends on
// randomness or the clock, or that never end, are excluded by reading their code, with the reason.
// The `workflows.argoproj.io/no-test` marker only says Argo's own e2e suite skips a file: unused.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { templateLibrary } from '../../argo/client.js';
import type { Library } from '../../argo/lint/validate.js';
import { EXAMPLES, selectExamples } from './selection.js';
import { resumeSuspended } from './resume.js';
import { startTandemSide } from './tandem-side.js';

const lintOnly = process.argv.includes('--lint-only');

// 1. Lint, timed (schema compile included); 2. which accepted Workflows can run here, and which phase
// Argo reaches with each (./selection.ts, shared with the node-tree oracle).
const t0 = performance.now();
const { files, library, lint, accepted, lintMs, runnable, notRunnable, excluded } = selectExamples();
console.log(`\nLINT  ${accepted.length}/${files.length} accepted (${((100 * accepted.length) / files.length).toFixed(1)}%), all files in ${lintMs.toFixed(0)} ms`);
for (const l of lint.filter((x) => x.result.issues.length)) console.log(`  rejected ${relative(EXAMPLES, l.file)}: ${l.result.issues[0]!.message}`);
if (lintOnly) process.exit(0);

// 3. Run them on a real dev server with a local worker.
Runtime.install({ logger: new DefaultLogger('ERROR') });
const dir = mkdtempSync(join(tmpdir(), 'argo-conformance-'));
const tandem = await startTandemSide(dir, 'argo-conformance');
const client = tandem.client;
const results: { file: string; expected: string; expectedWhy?: string; got: string; ok: boolean; ms: number; why?: string }[] = [];
const queue = [...runnable];
const inFlight = new Set<Promise<unknown>>();
async function lane(): Promise<void> {
  for (let c = queue.shift(); c; c = queue.shift()) {
    const start = performance.now();
    let got = 'Error';
    let why: string | undefined;
    try {
      const name = relative(EXAMPLES, c.file).replace(/\.yaml$/, '').replace(/[^a-z0-9]+/g, '-');
      // Each example in a namespace of its own, as its expected phase and timeout assume it runs alone:
      // in one namespace, examples that take the same mutex (synchronization-mutex-tmpl-level and its
      // -legacy twin both hold "test" for 5 × 50 s) wait for each other, as they would in Argo.
      const doc = { ...c.doc, metadata: { ...(c.doc.metadata as Record<string, unknown>), namespace: `conformance-${name}`.slice(0, 63).replace(/-+$/, '') } };
      const { id } = await client.submit({ lint: undefined as never, doc, library: library as unknown as Library } as never, { name });
      // Suspended nodes without a duration wait for a person: resume them, as `argo resume` would.
      // Tracked, so that none is still retrying inside the client when it closes.
      const track = (p: Promise<unknown>) => {
        const q = p.catch(() => undefined).finally(() => inFlight.delete(q));
        inFlight.add(q);
      };
      const resumer = setInterval(() => track(resumeSuspended(client, id)), 2000);
      const timeout = setTimeout(() => track(client.stop(id, `conformance timeout (${c.timeoutMs / 1000} s)`)), c.timeoutMs);
      try {
        const st = await client.wait(id);
        got = st.phase;
        if (st.phase !== c.expected) why = st.message ?? Object.values(st.nodes).find((n) => n.phase === 'Failed' || n.phase === 'Error')?.message;
      } finally {
        clearInterval(resumer);
        clearTimeout(timeout);
      }
    } catch (e) {
      why = (e as Error).message;
    }
    results.push({ file: relative(EXAMPLES, c.file), expected: c.expected, expectedWhy: c.why, got, ok: got === c.expected, ms: performance.now() - start, why });
  }
}
await Promise.all([lane(), lane(), lane(), lane()]);
await Promise.all([...inFlight]);
await tandem.stop();

const ok = results.filter((r) => r.ok);
console.log(`\nRUN   ${runnable.length} of ${accepted.length} accepted examples are runnable here; ${ok.length}/${runnable.length} reached Argo's phase (${((100 * ok.length) / Math.max(1, runnable.length)).toFixed(1)}%)`);
console.log(`\n| example | expected | got | s | note |\n|---|---|---|---|---|`);
for (const r of results.sort((a, b) => a.file.localeCompare(b.file))) {
  const note = [r.expectedWhy ? `expected: ${r.expectedWhy}` : '', r.ok ? '' : (r.why ?? '')].filter(Boolean).join('; ');
  console.log(`| ${r.file} | ${r.expected} | ${r.got} ${r.ok ? '✓' : '✗'} | ${(r.ms / 1000).toFixed(1)} | ${note.replace(/\|/g, '/').slice(0, 160)} |`);
}
console.log(`\nEXCLUDED (${excluded.length}): their phase is not a property of the file (read from their code)`);
for (const x of excluded) console.log(`  ${relative(EXAMPLES, x.file)}: ${x.reason}`);
console.log(`\nNOT RUNNABLE HERE (${notRunnable.length}):`);
for (const n of notRunnable) console.log(`  ${relative(EXAMPLES, n.file)}: ${n.reason}`);
console.log(`\nSUMMARY accepted ${((100 * accepted.length) / files.length).toFixed(1)}% (${accepted.length}/${files.length}), lint ${lintMs.toFixed(0)} ms; executed ${((100 * ok.length) / Math.max(1, runnable.length)).toFixed(1)}% (${ok.length}/${runnable.length} runnable, ${excluded.length} excluded, ${notRunnable.length} not runnable here); ${((performance.now() - t0) / 1000).toFixed(0)} s in all`);
void templateLibrary;
