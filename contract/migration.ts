// The staged-migration plan (Phase 1 pilot → Phase 2 dual stack → Phase 3 cut-over) and the state its
// workflow reports. Sandbox-safe: zod only.
import { z } from 'zod';
import { parseDuration } from './duration.js';

/** phase2.checkEvery bounds: each read is a timer and an activity in the migration's history. */
const MIN_CHECK_EVERY_MS = 1000;
const MAX_CHECKS_PER_WINDOW = 1000; // about 11 events a read: ~11k, a fifth of the hard limit

const duration = z
  .union([z.string(), z.number()])
  .refine((v) => parseDuration(v) !== undefined, { message: 'must be a duration such as "90s", "5m" or a number of seconds' });
const partition = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be a Slurm partition name (letters, digits, _ and -)');

export const BENCHMARKS = ['mpi', 'cpu', 'io'] as const;
export type BenchmarkKind = (typeof BENCHMARKS)[number];

export const MigrationPlanSchema = z
  .object({
    site: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be a site name (lower-case letters, digits, -)'),
    legacyPartition: partition.default('batch'),
    tandemPartition: partition.default('tandem'),
    /** Share of the legacy pool's nodes moved into Tandem's pool in Phase 1. */
    pilotShare: z.number().gt(0).max(1).default(0.1),
    /** Operators approve each gate (signal/CLI) before the next phase starts. */
    requireApproval: z.boolean().default(true),
    gate: z
      .object({
        suite: z.array(z.enum(BENCHMARKS)).min(1).default([...BENCHMARKS]),
        /** Tandem's completion time may be at most this multiple of the legacy path's. */
        maxCompletionRatio: z.number().min(1).default(1.5),
        /** Likewise for queue wait; waits below `waitSlack` count as equal (both near zero). */
        maxWaitRatio: z.number().min(1).default(2),
        waitSlack: duration.default('5s'),
        timeout: duration.default('10m'),
      })
      .strict()
      .prefault({}),
    phase2: z
      .object({
        /** Share of new pipelines routed through Tandem, raised step by step (percent). */
        steps: z.array(z.number().int().min(1).max(100)).min(1).default([10, 25, 50, 100]),
        /** How long each step is watched before the next. */
        observeFor: duration.default('5m'),
        /**
         * Also read the pool this often during the window and fall back at the first breach, instead of
         * only at the window's end (a breach then costs at most this long, not the whole window). Each
         * read is a timer and an activity in the history: keep it ≥ 1m for long windows. Unset: one
         * read at the end, as before (and the same history).
         */
        checkEvery: duration.optional(),
        maxErrorRate: z.number().min(0).max(1).default(0.05),
        maxWaitSeconds: z.number().min(0).default(600),
      })
      .strict()
      .prefault({}),
    phase3: z
      .object({
        /** After cut-over, operators may roll back within this window before the legacy path is retired. */
        rollbackWindow: duration.default('24h'),
        enable: z.array(z.enum(['preemption', 'oversubscription'])).default(['preemption', 'oversubscription']),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.legacyPartition === p.tandemPartition) ctx.addIssue({ code: 'custom', path: ['tandemPartition'], message: 'must differ from legacyPartition' });
    if (p.phase2.checkEvery !== undefined) {
      const every = parseDuration(p.phase2.checkEvery) ?? 0;
      const window = parseDuration(p.phase2.observeFor) ?? Infinity;
      // Each read is a timer and an activity in the migration's history: a bounded number per window
      // keeps it far below Temporal's event limit (a terminated migration would leave routing changed).
      if (every < MIN_CHECK_EVERY_MS) ctx.addIssue({ code: 'custom', path: ['phase2', 'checkEvery'], message: `must be at least 1s (got ${p.phase2.checkEvery})` });
      else if (every > window) ctx.addIssue({ code: 'custom', path: ['phase2', 'checkEvery'], message: `must not exceed observeFor (${p.phase2.observeFor})` });
      else if (window / every > MAX_CHECKS_PER_WINDOW) ctx.addIssue({ code: 'custom', path: ['phase2', 'checkEvery'], message: `reads the pool ${Math.ceil(window / every)} times in observeFor ${p.phase2.observeFor}; at most ${MAX_CHECKS_PER_WINDOW} are allowed: use checkEvery ≥ ${Math.ceil(window / MAX_CHECKS_PER_WINDOW / 1000)}s` });
    }
    const s = p.phase2.steps;
    if (s.some((v, i) => i > 0 && v <= s[i - 1]!)) ctx.addIssue({ code: 'custom', path: ['phase2', 'steps'], message: 'must increase step by step' });
  });

export type MigrationPlanInput = z.input<typeof MigrationPlanSchema>;
export type MigrationPlan = z.output<typeof MigrationPlanSchema>;

export type MigrationPhase = 'phase1' | 'phase2' | 'phase3';
export type MigrationState =
  | 'starting'
  | 'phase1'
  | 'awaiting-approval'
  | 'phase2'
  | 'phase3'
  | 'rollback-window'
  | 'completed'
  | 'rolled-back'
  | 'failed';

export interface PartitionState {
  name: string;
  nodes: string[];
  state: string;
  overSubscribe?: string;
  /**
   * Kubernetes sites only: the Tandem-owned labels, annotations and taints of each member node exactly
   * as the snapshot found them. An undo step carrying these restores every node to that record (not
   * merely to the pool it was in), so a rollback leaves nodes exactly as before.
   */
  nodeRecords?: NodeRecord[];
}

/** What Tandem may change on one Kubernetes node: its `tandem.dev/` pool label, annotation and taints. */
export interface NodeRecord {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
}

export interface SiteSnapshot {
  partitions: PartitionState[];
}

/** One reversible change, as data: the parent can undo a finished phase from these alone. */
export type UndoStep =
  | { kind: 'set-partition'; partition: PartitionState }
  /** `moveTo`: the partition that routed pipeline jobs still pending in this one move to. */
  | { kind: 'delete-partition'; name: string; moveTo?: string }
  | { kind: 'set-routing'; percent: number; policies: string[]; pools?: { tandem: string; legacy: string } };

export interface BenchmarkResult {
  kind: BenchmarkKind;
  pool: 'tandem' | 'legacy';
  jobId: string;
  state: string;
  waitSeconds: number;
  runSeconds: number;
}

export interface GateResult {
  phase: MigrationPhase;
  name: string;
  passed: boolean;
  reason: string;
  at: string;
  details?: BenchmarkResult[] | Record<string, number>;
}

export interface MigrationLogEntry {
  at: string;
  phase?: MigrationPhase;
  message: string;
}

export interface MigrationStatus {
  site: string;
  state: MigrationState;
  phase?: MigrationPhase;
  paused: boolean;
  pools: { legacy: number; tandem: number };
  routingPercent: number;
  policies: string[];
  gates: GateResult[];
  /** Phases that finished and can be rolled back, oldest first. */
  completedPhases: MigrationPhase[];
  log: MigrationLogEntry[];
}

/**
 * Phase 1's benchmark gate: every job completed on both paths, and for each kind Tandem's run time is
 * within `maxCompletionRatio` of the legacy path's and its wait within `maxWaitRatio` (waits under the
 * slack count as equal: both are "no wait").
 */
export function evaluateGate(results: BenchmarkResult[], gate: { maxCompletionRatio: number; maxWaitRatio: number }, waitSlackSeconds: number): { passed: boolean; reason: string } {
  const problems: string[] = [];
  const kinds = [...new Set(results.map((r) => r.kind))].sort();
  for (const kind of kinds) {
    const t = results.find((r) => r.kind === kind && r.pool === 'tandem');
    const l = results.find((r) => r.kind === kind && r.pool === 'legacy');
    if (!t || !l) {
      problems.push(`${kind}: missing a ${t ? 'legacy' : 'tandem'} result`);
      continue;
    }
    for (const r of [t, l]) if (r.state !== 'COMPLETED') problems.push(`${kind} on the ${r.pool} path ended ${r.state}`);
    const runLimit = gate.maxCompletionRatio * Math.max(l.runSeconds, 1);
    if (t.runSeconds > runLimit) problems.push(`${kind}: Tandem ran ${t.runSeconds}s vs legacy ${l.runSeconds}s (limit ${gate.maxCompletionRatio}x)`);
    const waitLimit = Math.max(gate.maxWaitRatio * l.waitSeconds, waitSlackSeconds);
    if (t.waitSeconds > waitLimit) problems.push(`${kind}: Tandem waited ${t.waitSeconds}s vs legacy ${l.waitSeconds}s (limit ${gate.maxWaitRatio}x, slack ${waitSlackSeconds}s)`);
  }
  return problems.length === 0 ? { passed: true, reason: `all ${kinds.length} benchmark kinds within the SLO ratios` } : { passed: false, reason: problems.join('; ') };
}

/** The pilot: the last ⌈share × n⌉ nodes of the legacy pool (at least one, never all of them). */
export function choosePilotNodes(legacyNodes: string[], share: number): string[] {
  const sorted = [...legacyNodes].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const count = Math.min(Math.max(1, Math.ceil(sorted.length * share)), Math.max(sorted.length - 1, 0));
  return sorted.slice(sorted.length - count);
}
