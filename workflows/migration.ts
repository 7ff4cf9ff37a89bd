// stagedMigration: Phase 1 (pilot pool + benchmark gate) → Phase 2 (dual stack, routing raised step
// by step, automatic fallback on an SLO breach) → Phase 3 (cut-over, rollback window, retirement).
// Each phase is a child workflow that returns its undo steps as data, so the parent can roll any
// finished phase back; operators approve, pause, resume and roll back through signals and an update.
import {
  CancellationScope,
  ChildWorkflowHandle,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { MigrationActivities, Observation as PoolObservation } from '../activities/migration.js';
import { durationMs } from '../contract/duration.js';
import { failure } from '../contract/failures.js';
import { refuseUnreadableInput } from '../contract/refused-payload.js';
import { choosePilotNodes, evaluateGate, type GateResult, type MigrationLogEntry, type MigrationPhase, type MigrationPlan, type MigrationState, type MigrationStatus, type PartitionState, type UndoStep } from '../contract/migration.js';

export const migrationStatusQuery = defineQuery<MigrationStatus>('migrationStatus');
export const approveSignal = defineSignal<[MigrationPhase]>('approve');
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const rollbackUpdate = defineUpdate<{ rolledBack: MigrationPhase; state: MigrationState }, []>('rollback');

const PHASES: MigrationPhase[] = ['phase1', 'phase2', 'phase3'];

const acts = proxyActivities<MigrationActivities>({ startToCloseTimeout: '2m', retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 } });
const benchActs = proxyActivities<MigrationActivities>({ startToCloseTimeout: '2h', heartbeatTimeout: '10s', retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 } });

export interface PhaseResult {
  outcome: 'passed' | 'failed' | 'fell-back';
  reason: string;
  undo: UndoStep[];
  gates: GateResult[];
  pools: { legacy: number; tandem: number };
  routingPercent: number;
  policies: string[];
  log: MigrationLogEntry[];
}

export interface PhaseInput {
  plan: MigrationPlan;
  runKey: string;
  /** Phase 2 continues as new between steps: where it got to and what it must undo. */
  resumeAt?: number;
  undo?: UndoStep[];
  gates?: GateResult[];
  log?: MigrationLogEntry[];
}

const now = () => new Date().toISOString();
const size = (p: PartitionState | undefined) => p?.nodes.length ?? 0;

/** Runs undo steps newest first; cancellation cannot interrupt a half-undone phase. */
async function undoAll(site: string, undo: UndoStep[]): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    for (const step of [...undo].reverse()) await acts.applyUndo(site, step);
  });
}

// ---- Phase 1: move a share of the legacy pool into Tandem's, then gate on benchmarks ------------
export async function migrationPhase1({ plan, runKey }: PhaseInput): Promise<PhaseResult> {
  const undo: UndoStep[] = [];
  const log: MigrationLogEntry[] = [];
  const note = (message: string) => log.push({ at: now(), phase: 'phase1', message });
  try {
    const snap = await acts.snapshotSite(plan.site);
    const legacy = snap.partitions.find((p) => p.name === plan.legacyPartition);
    if (!legacy) throw failure('InvalidRequest', `site ${plan.site} has no partition "${plan.legacyPartition}" (partitions: ${snap.partitions.map((p) => p.name).join(', ')})`);
    const existing = snap.partitions.find((p) => p.name === plan.tandemPartition);
    const pilot = choosePilotNodes(legacy.nodes, plan.pilotShare);
    // Undo is recorded before each change, so a crash between the two leaves nothing unrecorded.
    undo.push(existing ? { kind: 'set-partition', partition: existing } : { kind: 'delete-partition', name: plan.tandemPartition, moveTo: plan.legacyPartition });
    await acts.applyPartition(plan.site, { name: plan.tandemPartition, nodes: [...new Set([...(existing?.nodes ?? []), ...pilot])], state: 'UP' });
    undo.push({ kind: 'set-partition', partition: legacy });
    await acts.applyPartition(plan.site, { ...legacy, nodes: legacy.nodes.filter((n) => !pilot.includes(n)) });
    note(`moved ${pilot.length} of ${legacy.nodes.length} nodes (${pilot.join(', ')}) from ${plan.legacyPartition} into ${plan.tandemPartition}`);

    const results = await benchActs.runBenchmarks(plan.site, { runKey, tandemPartition: plan.tandemPartition, legacyPartition: plan.legacyPartition, suite: plan.gate.suite, timeoutMs: durationMs(plan.gate.timeout) });
    const verdict = evaluateGate(results, plan.gate, durationMs(plan.gate.waitSlack) / 1000);
    const gate: GateResult = { phase: 'phase1', name: 'benchmark', passed: verdict.passed, reason: verdict.reason, at: now(), details: results };
    note(`benchmark gate ${verdict.passed ? 'passed' : 'FAILED'}: ${verdict.reason}`);
    const pools = { legacy: legacy.nodes.length - pilot.length, tandem: (existing?.nodes.length ?? 0) + pilot.length };
    if (!verdict.passed) {
      await undoAll(plan.site, undo);
      note('returned the pilot nodes: partitions are as before Phase 1');
      return { outcome: 'failed', reason: verdict.reason, undo: [], gates: [gate], pools: { legacy: legacy.nodes.length, tandem: size(existing) }, routingPercent: 0, policies: [], log };
    }
    return { outcome: 'passed', reason: verdict.reason, undo, gates: [gate], pools, routingPercent: 0, policies: [], log };
  } catch (err) {
    await undoAll(plan.site, undo);
    throw err;
  }
}

// ---- Phase 2: route a rising share of new pipelines through Tandem; fall back on an SLO breach ---
export async function migrationPhase2(input: PhaseInput): Promise<PhaseResult> {
  const { plan } = input;
  const undo: UndoStep[] = [...(input.undo ?? [])];
  const gates: GateResult[] = [...(input.gates ?? [])];
  const log: MigrationLogEntry[] = [...(input.log ?? [])];
  const note = (message: string) => log.push({ at: now(), phase: 'phase2', message });
  let paused = false;
  setHandler(pauseSignal, () => void (paused = true));
  setHandler(resumeSignal, () => void (paused = false));
  const steps = plan.phase2.steps;
  let percent = input.resumeAt ? steps[input.resumeAt - 1]! : 0;
  // Pipelines that submit a Slurm job at the site read this (activities/routing.ts) and route by it.
  const pools = { tandem: plan.tandemPartition, legacy: plan.legacyPartition };
  try {
    for (let i = input.resumeAt ?? 0; i < steps.length; i++) {
      await condition(() => !paused);
      // The window starts before the routing changes, so that every job routed by the new share (made
      // once setRouting has run) is counted, however late this workflow's next task runs. An activity's
      // input is not compared on replay: recorded histories replay unchanged.
      const since = Date.now();
      const prev = await acts.setRouting(plan.site, { percent: steps[i]!, policies: [], pools });
      if (undo.length === 0) undo.push({ kind: 'set-routing', percent: prev.percent, policies: prev.policies, ...(prev.pools ? { pools: prev.pools } : {}) });
      percent = steps[i]!;
      note(`routing ${percent}% of new pipelines through Tandem (${plan.tandemPartition}; the rest ${plan.legacyPartition})`);
      const end = since + durationMs(plan.phase2.observeFor);
      const breachesOf = (o: PoolObservation) =>
        [
          o.errorRate > plan.phase2.maxErrorRate ? `error rate ${(o.errorRate * 100).toFixed(1)}% > ${(plan.phase2.maxErrorRate * 100).toFixed(1)}% (${o.failed}/${o.jobs} jobs failed)` : undefined,
          o.avgWaitSeconds > plan.phase2.maxWaitSeconds ? `average wait ${o.avgWaitSeconds.toFixed(0)}s > ${plan.phase2.maxWaitSeconds}s` : undefined,
        ].filter((b): b is string => b !== undefined);
      let obs: PoolObservation;
      let breaches: string[];
      // Without checkEvery: one read at the window's end (the commands recorded histories have).
      // With it: a read every checkEvery, ending the window early at the first breach.
      const every = plan.phase2.checkEvery === undefined ? undefined : durationMs(plan.phase2.checkEvery);
      for (;;) {
        await sleep(every === undefined ? end - since : Math.max(1, Math.min(every, end - Date.now())));
        await condition(() => !paused);
        obs = await acts.observePool(plan.site, { partition: plan.tandemPartition, sinceMs: since });
        breaches = breachesOf(obs);
        if (every === undefined || breaches.length > 0 || Date.now() >= end) break;
      }
      const gate: GateResult = { phase: 'phase2', name: `step ${percent}%`, passed: breaches.length === 0, reason: breaches.join('; ') || `within SLO (${obs.jobs} jobs, error rate ${(obs.errorRate * 100).toFixed(1)}%, wait ${obs.avgWaitSeconds.toFixed(1)}s, utilisation ${(obs.utilisation * 100).toFixed(0)}%)`, at: now(), details: { ...obs } };
      gates.push(gate);
      if (!gate.passed) {
        note(`SLO breach at ${percent}%: ${gate.reason}; falling back to 0%`);
        await undoAll(plan.site, undo);
        return { outcome: 'fell-back', reason: gate.reason, undo: [], gates, pools: { legacy: 0, tandem: 0 }, routingPercent: 0, policies: [], log };
      }
      if (i + 1 < steps.length && workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof migrationPhase2>({ ...input, resumeAt: i + 1, undo, gates, log });
      }
    }
    return { outcome: 'passed', reason: `all ${steps.length} routing steps within SLO`, undo, gates, pools: { legacy: 0, tandem: 0 }, routingPercent: percent, policies: [], log };
  } catch (err) {
    await undoAll(plan.site, undo);
    throw err;
  }
}

// ---- Phase 3: drain the legacy pool into Tandem's, route everything, enable advanced policies ----
export async function migrationPhase3({ plan }: PhaseInput): Promise<PhaseResult> {
  const undo: UndoStep[] = [];
  const log: MigrationLogEntry[] = [];
  const note = (message: string) => log.push({ at: now(), phase: 'phase3', message });
  try {
    const snap = await acts.snapshotSite(plan.site);
    const legacy = snap.partitions.find((p) => p.name === plan.legacyPartition);
    const tandem = snap.partitions.find((p) => p.name === plan.tandemPartition);
    if (!legacy || !tandem) throw failure('InvalidRequest', `Phase 3 needs both partitions "${plan.legacyPartition}" and "${plan.tandemPartition}" on ${plan.site}`);
    // Legacy stops taking jobs (running ones finish), and its nodes join Tandem's pool.
    undo.push({ kind: 'set-partition', partition: legacy });
    await acts.applyPartition(plan.site, { ...legacy, state: 'DRAIN' });
    undo.push({ kind: 'set-partition', partition: tandem });
    const merged = [...new Set([...tandem.nodes, ...legacy.nodes])];
    const oversubscribe = plan.phase3.enable.includes('oversubscription') ? 'YES:2' : tandem.overSubscribe;
    await acts.applyPartition(plan.site, { ...tandem, nodes: merged, overSubscribe: oversubscribe });
    note(`drained ${plan.legacyPartition}; ${plan.tandemPartition} now has all ${merged.length} nodes${oversubscribe === 'YES:2' ? ', oversubscription on' : ''}`);
    const prev = await acts.setRouting(plan.site, { percent: 100, policies: plan.phase3.enable, pools: { tandem: plan.tandemPartition, legacy: plan.legacyPartition } });
    undo.push({ kind: 'set-routing', percent: prev.percent, policies: prev.policies, ...(prev.pools ? { pools: prev.pools } : {}) });
    note(`routing 100% through Tandem; policies enabled: ${plan.phase3.enable.join(', ') || 'none'}`);
    return { outcome: 'passed', reason: 'cut over', undo, gates: [], pools: { legacy: 0, tandem: merged.length }, routingPercent: 100, policies: plan.phase3.enable, log };
  } catch (err) {
    await undoAll(plan.site, undo);
    throw err;
  }
}

// ---- the parent -------------------------------------------------------------------------------
export interface StagedMigrationInput {
  plan: MigrationPlan;
  /** Carried across continue-as-new. */
  carried?: { next: number; undo: Partial<Record<MigrationPhase, UndoStep[]>>; status: MigrationStatus; approved: MigrationPhase[]; generation: number };
}

export async function stagedMigration(input: StagedMigrationInput): Promise<MigrationStatus> {
  refuseUnreadableInput(input, 'stagedMigration'); // contract/refused-payload.ts
  const { plan, carried } = input;
  const { workflowId } = workflowInfo();
  const status: MigrationStatus = carried?.status ?? { site: plan.site, state: 'starting', paused: false, pools: { legacy: 0, tandem: 0 }, routingPercent: 0, policies: [], gates: [], completedPhases: [], log: [] };
  const undo: Partial<Record<MigrationPhase, UndoStep[]>> = carried?.undo ?? {};
  const approved = new Set<MigrationPhase>(carried?.approved ?? ['phase1']);
  let next = carried?.next ?? 0;
  let generation = carried?.generation ?? 0;
  let rollbackRequested = false;
  let rollbackResult: { rolledBack: MigrationPhase; state: MigrationState } | undefined;
  let child: ChildWorkflowHandle<typeof migrationPhase1> | undefined;
  let childScope: CancellationScope | undefined;
  const note = (message: string, phase?: MigrationPhase) => status.log.push({ at: now(), phase, message });

  setHandler(migrationStatusQuery, () => status);
  setHandler(approveSignal, (phase) => {
    approved.add(phase);
    note(`operator approved ${phase}`, phase);
  });
  setHandler(pauseSignal, () => {
    status.paused = true;
    note('paused by operator');
    if (child) void getExternalWorkflowHandle(child.workflowId).signal(pauseSignal).catch(() => undefined);
  });
  setHandler(resumeSignal, () => {
    status.paused = false;
    note('resumed by operator');
    if (child) void getExternalWorkflowHandle(child.workflowId).signal(resumeSignal).catch(() => undefined);
  });
  setHandler(
    rollbackUpdate,
    async () => {
      rollbackRequested = true;
      childScope?.cancel();
      await condition(() => rollbackResult !== undefined);
      const r = rollbackResult!;
      rollbackResult = undefined;
      return r;
    },
    {
      validator: () => {
        if (status.state === 'completed') throw new Error('the migration is complete and the legacy path retired; there is nothing to roll back');
        if (rollbackRequested) throw new Error('a rollback is already in progress');
        if (!child && status.completedPhases.length === 0) throw new Error('no phase has made changes yet; nothing to roll back');
      },
    },
  );

  /** Undoes the running phase (its child compensates) or else the last finished one. */
  async function rollback(interrupted?: MigrationPhase): Promise<void> {
    let phase = interrupted;
    if (!phase) {
      phase = status.completedPhases.pop()!;
      status.state = phase; // visible while undoing
      await undoAll(plan.site, undo[phase] ?? []);
      delete undo[phase];
    }
    next = PHASES.indexOf(phase);
    approved.delete(phase);
    status.state = 'rolled-back';
    if (phase === 'phase1') status.pools = { legacy: status.pools.legacy + status.pools.tandem, tandem: 0 };
    if (phase !== 'phase1') status.routingPercent = phase === 'phase3' ? (status.completedPhases.includes('phase2') ? plan.phase2.steps.at(-1)! : 0) : 0;
    if (phase === 'phase3') status.policies = [];
    note(`rolled back ${phase}: the site is as it was before ${phase}; approve ${phase} to run it again`, phase);
    rollbackRequested = false;
    rollbackResult = { rolledBack: phase, state: status.state };
  }

  for (;;) {
    const phase = PHASES[next];
    await condition(() => rollbackRequested || (!status.paused && (phase === undefined || approved.has(phase))));
    if (rollbackRequested) {
      await rollback();
      continue;
    }
    if (phase === undefined) break;
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof stagedMigration>({ plan, carried: { next, undo, status, approved: [...approved], generation } });
    }
    status.state = phase;
    status.phase = phase;
    note(`${phase} started`, phase);
    const childWorkflow = phase === 'phase1' ? migrationPhase1 : phase === 'phase2' ? migrationPhase2 : migrationPhase3;
    let result: PhaseResult | undefined;
    childScope = new CancellationScope();
    try {
      result = await childScope.run(async () => {
        child = await startChild(childWorkflow, { workflowId: `${workflowId}-${phase}-${generation++}`, args: [{ plan, runKey: `${workflowId}-${generation}` }] });
        if (status.paused) await getExternalWorkflowHandle(child.workflowId).signal(pauseSignal);
        return child.result();
      });
    } catch (err) {
      if (!(rollbackRequested && isCancellation(err))) {
        status.state = 'failed';
        note(`${phase} failed: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`, phase);
        approved.delete(phase);
        child = undefined;
        childScope = undefined;
        await condition(() => approved.has(phase) || rollbackRequested);
        continue;
      }
    } finally {
      child = undefined;
      childScope = undefined;
    }
    if (!result) {
      await rollback(phase); // the child undid its own changes when it was cancelled
      continue;
    }
    status.log.push(...result.log);
    status.gates.push(...result.gates.filter((g) => !status.gates.some((x) => x.at === g.at && x.name === g.name)));
    if (result.outcome !== 'passed') {
      approved.delete(phase);
      if (result.outcome === 'fell-back') {
        // Phase 2's automatic fallback: routing is back at 0% (the child undid it); return the pilot nodes too.
        status.routingPercent = 0;
        const p1 = status.completedPhases.indexOf('phase1');
        if (p1 >= 0) {
          await undoAll(plan.site, undo.phase1 ?? []);
          delete undo.phase1;
          status.completedPhases.splice(p1, 1);
          status.pools = { legacy: status.pools.legacy + status.pools.tandem, tandem: 0 };
          note('fell back: routing 0%, pilot nodes returned to the legacy pool', 'phase2');
        }
        next = 0;
        approved.delete('phase1');
      }
      // Reported only once every undo has finished, so "failed" always means "back as it was".
      status.state = 'failed';
      note(`${phase} did not pass: ${result.reason}; approve ${PHASES[next]} to try again, or roll back`, phase);
      continue;
    }
    undo[phase] = result.undo;
    status.completedPhases.push(phase);
    if (phase === 'phase1') status.pools = result.pools;
    if (phase === 'phase3') status.pools = result.pools;
    status.routingPercent = result.routingPercent;
    status.policies = result.policies;
    next++;
    if (phase !== 'phase3') {
      if (!plan.requireApproval) approved.add(PHASES[next]!);
      status.state = 'awaiting-approval';
      note(`${phase} passed; ${plan.requireApproval ? `waiting for approval of ${PHASES[next]}` : `continuing with ${PHASES[next]}`}`, phase);
      continue;
    }
    // Phase 3 passed: keep the rollback window open, then retire the legacy path.
    status.state = 'rollback-window';
    note(`cut-over done; rollback window open for ${plan.phase3.rollbackWindow}`, 'phase3');
    const rolledBack = await condition(() => rollbackRequested, durationMs(plan.phase3.rollbackWindow));
    if (rolledBack) continue;
    const legacy = (await acts.snapshotSite(plan.site)).partitions.find((p) => p.name === plan.legacyPartition);
    if (legacy) await acts.applyPartition(plan.site, { ...legacy, nodes: [], state: 'INACTIVE' });
    status.pools.legacy = 0;
    status.state = 'completed';
    status.phase = undefined;
    note(`legacy partition ${plan.legacyPartition} retired (inactive, no nodes)`, 'phase3');
    break;
  }
  return status;
}
