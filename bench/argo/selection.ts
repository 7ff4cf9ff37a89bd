// Which of Argo's examples the benches run, shared by the conformance bench (./conformance.ts) and the
// node-tree oracle (./oracle.ts) so both measure the same set: every file is linted with the whole
// example corpus (and Tandem's shipped templates) as its template library; an accepted Workflow that
// resolves and can run on this host (its interpreters exist, no Kubernetes-only feature, no network) is
// runnable unless ./expected-phase.ts excludes it (its outcome depends on randomness or the clock, or
// it never ends: read from its code).
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lintFile, Library, type LintResult } from '../../argo/lint/validate.js';
import { warmSchema } from '../../argo/lint/schema.js';
import { resolveWorkflow } from '../../argo/resolve.js';
import { whyNotRunnable } from '../../argo/lint/runnable.js';
import type { Json } from '../../argo/lint/load.js';
import { expectedPhase, loopSeconds, templateCode } from './expected-phase.js';
import { reachableTemplates } from '../../argo/lint/runnable.js';

export const EXAMPLES = process.env.ARGO_EXAMPLES ?? fileURLToPath(new URL('../../../shared/data/argo-examples', import.meta.url));
/** The template library is always the whole corpus, whatever subset is measured. */
export const CORPUS = process.env.ARGO_CORPUS ?? fileURLToPath(new URL('../../../shared/data/argo-examples', import.meta.url));
export const RUN_TIMEOUT_MS = Number(process.env.ARGO_RUN_TIMEOUT_MS ?? 90_000);
export const DURATION_TIMEOUT_MS = Number(process.env.ARGO_DURATION_TIMEOUT_MS ?? 180_000);

export interface Case {
  file: string;
  doc: Json;
  expected: 'Succeeded' | 'Failed';
  why?: string;
  timeoutMs: number;
}

export interface Selection {
  files: string[];
  library: Library;
  lint: { file: string; result: LintResult }[];
  accepted: { file: string; result: LintResult }[];
  lintMs: number;
  /** Longest timeout first, so the slow ones do not end up last in a lane. */
  runnable: Case[];
  notRunnable: { file: string; reason: string }[];
  excluded: { file: string; reason: string }[];
}

/** Sleeps a run waits through (steps holding one mutex in turn take their sum): a longer bench timeout. */
const sleepy = (doc: Json) => /\bsleep\s+\d{2,}|time\.sleep\(\d{2,}|synchronization/.test(JSON.stringify(doc));

/** Lints every file of `files` (default: every *.yaml under EXAMPLES) and sorts the Workflows into runnable, excluded and not runnable here. */
export function selectExamples(files: string[] = execSync(`find ${EXAMPLES} -name '*.yaml'`).toString().trim().split('\n').sort()): Selection {
  const t0 = performance.now();
  warmSchema();
  // The template library is the whole example corpus (every directory), whatever subset is measured, as
  // if all of Argo's example templates were applied to the cluster; then Tandem's shipped templates.
  const library = new Library().addDirectory(CORPUS).addDirectory(EXAMPLES);
  for (const d of [fileURLToPath(new URL('../../templates/argo', import.meta.url))]) library.addDirectory(d);
  const lint = files.map((f) => ({ file: f, result: lintFile(f, { library }) }));
  const lintMs = performance.now() - t0;
  const accepted = lint.filter((l) => l.result.issues.length === 0);
  const runnable: Case[] = [];
  const notRunnable: { file: string; reason: string }[] = [];
  const excluded: { file: string; reason: string }[] = [];
  for (const l of accepted) {
    for (const d of l.result.documents.filter((x) => x.kind === 'Workflow')) {
      let reason: string | undefined;
      let spec: Json | undefined;
      try {
        spec = resolveWorkflow(d.value, library);
        reason = whyNotRunnable(spec);
      } catch (e) {
        reason = (e as Error).message;
      }
      if (reason || !spec) {
        notRunnable.push({ file: l.file, reason: reason ?? 'does not resolve' });
        continue;
      }
      const verdict = expectedPhase(spec);
      if ('exclude' in verdict) excluded.push({ file: l.file, reason: verdict.exclude });
      else {
        // A loop over sleeps (colored-logs.yaml prints for 99 s) gets its time and half again.
        const looped = Math.max(0, ...reachableTemplates(spec).map((t) => loopSeconds(templateCode(t)))) * 1500 + 30_000;
        runnable.push({ file: l.file, doc: d.value, expected: verdict.phase, why: verdict.why, timeoutMs: Math.max(sleepy(d.value) ? DURATION_TIMEOUT_MS * 2 : RUN_TIMEOUT_MS, looped) });
      }
    }
  }
  runnable.sort((a, b) => b.timeoutMs - a.timeoutMs);
  return { files, library, lint, accepted, lintMs, runnable, notRunnable, excluded };
}
