// Determinism suite: every recorded history under test/histories/ replays against the current
// workflow code on every test run. Add a fixture with `npm run histories:record` (scripted
// scenarios) or by exporting a real run (`temporal workflow show -w <id> --output json > file`).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Worker, bundleWorkflowCode, DefaultLogger, Runtime, type ReplayResult, type WorkflowBundle } from '@temporalio/worker';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { historyFromJSON } from '../sdk/history-json.js';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workflowBundle } from './helpers.js';
import { replaySinks } from '../workers/replay.js';
import { PATCHES } from '../workflows/pipeline.js';
import { ARGO_PATCHES } from '../workflows/argo/api.js';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));
// Each run's own workflow id (child workflow ids and lock holders derive from it); the file name otherwise.
const IDS = JSON.parse(readFileSync(join(DIR, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const histories = readdirSync(DIR)
  .filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json')
  .map((f) => ({ file: f, history: historyFromJSON(JSON.parse(readFileSync(join(DIR, f), 'utf8'))) }));
const typeOf = (h: (typeof histories)[number]) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
// The changed/patched fixtures redefine hybridPipeline only.
const pipelineHistories = histories.filter((h) => typeOf(h) === 'hybridPipeline');
// The sinks of the replay worker (workers/replay.ts): Tandem's, recording nothing.
const sinks = replaySinks();
const fixture = (name: string) => bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url)), logger: new DefaultLogger('ERROR') });

async function replayBatch(bundle: Promise<WorkflowBundle>, items: HistoryAndWorkflowId[]): Promise<ReplayResult[]> {
  const out: ReplayResult[] = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: await bundle, sinks }, items)) out.push(r);
  return out;
}

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another file in this process */
  }
});

describe('replay of recorded histories', () => {
  test('there is at least one history per workflow type', () => {
    const types = new Set(histories.map((h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
    expect([...types].sort()).toEqual(['argoLock', 'argoSlice', 'argoWorkflow', 'hybridPipeline', 'migrationPhase1', 'migrationPhase2', 'migrationPhase3', 'quotaLedger', 'stagedMigration']);
    expect(histories.length).toBeGreaterThanOrEqual(3);
  });

  test('every patch has histories recorded before and after it', () => {
    const patchIdsIn = (h: (typeof histories)[number]['history']) =>
      (h.events ?? [])
        .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
        .map((e) => Buffer.from(e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!.data!).toString('utf8'));
    // The Argo interpreter's patches only fire for memoize/synchronization templates: a run using them
    // carries the marker, and runs recorded before them (argoWorkflow-dag) still replay.
    for (const id of Object.values(ARGO_PATCHES)) expect(histories.filter((h) => patchIdsIn(h.history).some((d) => d.includes(id))).length).toBeGreaterThan(0);
    for (const id of Object.values(PATCHES)) {
      expect(histories.filter((h) => patchIdsIn(h.history).some((d) => d.includes(id))).length).toBeGreaterThan(0);
      expect(histories.filter((h) => h.file.includes(`.before-`) && !patchIdsIn(h.history).some((d) => d.includes(id))).length).toBeGreaterThan(0);
    }
  });

  // One replay worker for every history (Worker.runReplayHistories replays them one after another, in
  // order): a worker per history cost most of this file's time.
  let replayed: Promise<ReplayResult[]> | undefined;
  const replayAll = () => (replayed ??= replayBatch(workflowBundle(), histories.map((h) => ({ workflowId: IDS[h.file] ?? h.file, history: h.history }))));
  test.each(histories.map((h, i) => [h.file, i] as const))('%s replays deterministically on the current code', async (_file, i) => {
    const r = (await replayAll())[i]!;
    expect(r.error).toBeUndefined();
  });

  test('a deliberately changed workflow is caught on replay', async () => {
    const changed = await fixture('changed-pipeline');
    const err = await Worker.runReplayHistory({ workflowBundle: changed, sinks }, pipelineHistories[0]!.history, 'changed').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeterminismViolationError);
    expect(String((err as Error).message)).toMatch(/Nondeterminism|nondeterministic|does not match/i);
  });

  test('the same change behind patched() replays every history', async () => {
    const patchedBundle = await fixture('patched-pipeline');
    const results = await replayBatch(Promise.resolve(patchedBundle), pipelineHistories.map((h) => ({ workflowId: h.file, history: h.history })));
    expect(results.map((r) => [r.workflowId, r.error?.message])).toEqual(pipelineHistories.map((h) => [h.file, undefined]));
  });
});
