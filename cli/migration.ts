// `tandem migration …`: start, follow and steer a site's staged migration (Phase 1 pilot → Phase 2
// dual stack → Phase 3 cut-over).
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { describeExecution } from '../sdk/list.js';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { MigrationPlanSchema, type MigrationPhase, type MigrationStatus } from '../contract/migration.js';
import { parseYamlWith } from '../contract/parse.js';
import type { TandemClient } from '../sdk/client.js';
import { table } from './runs.js';

export const migrationId = (siteOrId: string) => (siteOrId.startsWith('migration-') ? siteOrId : `migration-${siteOrId}`);

export function formatMigration(s: MigrationStatus): string {
  const lines = [
    `Site        ${s.site}`,
    `State       ${s.state}${s.phase ? ` (${s.phase})` : ''}${s.paused ? '  [paused]' : ''}`,
    `Pools       legacy ${s.pools.legacy} nodes, tandem ${s.pools.tandem} nodes`,
    `Routing     ${s.routingPercent}% of new pipelines through Tandem${s.policies.length ? `; policies: ${s.policies.join(', ')}` : ''}`,
    `Completed   ${s.completedPhases.join(' → ') || 'none'}`,
  ];
  if (s.gates.length) lines.push('', table([['GATE', 'PHASE', 'RESULT', 'REASON'], ...s.gates.map((g) => [g.name, g.phase, g.passed ? 'passed' : 'FAILED', g.reason])]));
  lines.push('', 'Log', ...s.log.slice(-12).map((l) => `  ${l.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ${l.phase ?? '      '}  ${l.message}`));
  return lines.join('\n');
}

export function registerMigrationCommands(program: Command, connect: () => Promise<TandemClient>): void {
  const mig = program.command('migration').description("stage a site's move to Tandem: pilot, dual stack, cut-over (operators)");
  const withHandle = async (siteOrId: string, fn: (h: ReturnType<TandemClient['client']['workflow']['getHandle']>) => Promise<void>) => {
    const tandem = await connect();
    try {
      const h = tandem.client.workflow.getHandle(migrationId(siteOrId));
      try {
        await describeExecution(tandem.client, h.workflowId);
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new Error(`no migration for "${siteOrId}" (start one with \`tandem migration start --site ${siteOrId}\`)`);
        throw e;
      }
      await fn(h);
    } finally {
      await tandem.close();
    }
  };

  mig
    .command('start')
    .description('start the migration of a site (Phase 1 begins at once)')
    .requiredOption('--site <site>', 'the site: Slurm (workers: TANDEM_SLURM_SITES) or Kubernetes (TANDEM_K8S_SITES)')
    .option('--plan <file>', 'migration plan (YAML/JSON): partitions, pilot share, gates, steps, windows')
    .action(async (o: { site: string; plan?: string }) => {
      const raw = o.plan ? await readFile(o.plan, 'utf8') : `site: ${o.site}\n`;
      const plan = parseYamlWith(MigrationPlanSchema, raw, o.plan ?? '--site', 'migration plan', 'with at least "site"');
      if (plan.site !== o.site) throw new Error(`--site ${o.site} does not match the plan's site "${plan.site}"`);
      const tandem = await connect();
      try {
        await tandem.client.workflow.start('stagedMigration', { taskQueue: tandem.taskQueue, workflowId: migrationId(plan.site), args: [{ plan }] });
        console.log(`tandem: migration of ${plan.site} started (${migrationId(plan.site)}); follow with \`tandem migration status ${plan.site}\``);
      } catch (e) {
        if (e instanceof WorkflowExecutionAlreadyStartedError) throw new Error(`a migration of ${plan.site} is already running (\`tandem migration status ${plan.site}\`)`);
        throw e;
      } finally {
        await tandem.close();
      }
    });

  mig
    .command('status <site>')
    .description('phase, pool sizes, routing, gate results and the latest log')
    .option('--json', 'machine-readable output')
    .action((site: string, o: { json?: boolean }) =>
      withHandle(site, async (h) => {
        const st = await h.query<MigrationStatus>('migrationStatus');
        console.log(o.json ? JSON.stringify(st, null, 2) : formatMigration(st));
      }),
    );

  mig
    .command('approve <site> <phase>')
    .description('approve the next phase (phase2 or phase3), or re-run a phase after a failed gate')
    .action((site: string, phase: string) =>
      withHandle(site, async (h) => {
        if (!['phase1', 'phase2', 'phase3'].includes(phase)) throw new Error(`phase must be phase1, phase2 or phase3 (got ${JSON.stringify(phase)})`);
        await h.signal('approve', phase as MigrationPhase);
        console.log(`tandem: approved ${phase} for ${site}`);
      }),
    );

  for (const verb of ['pause', 'resume'] as const) {
    mig
      .command(`${verb} <site>`)
      .description(verb === 'pause' ? 'hold the migration before its next step' : 'continue a paused migration')
      .action((site: string) =>
        withHandle(site, async (h) => {
          await h.signal(verb);
          console.log(`tandem: ${verb}d the migration of ${site}`);
        }),
      );
  }

  mig
    .command('rollback <site>')
    .description('undo the running phase, or else the last finished one (waits until undone)')
    .action((site: string) =>
      withHandle(site, async (h) => {
        try {
          const r = await h.executeUpdate<{ rolledBack: MigrationPhase; state: string }, []>('rollback');
          console.log(`tandem: rolled back ${r.rolledBack} on ${site}; state ${r.state}`);
        } catch (e) {
          const cause = (e as { cause?: Error }).cause;
          throw new Error(cause?.message ?? (e as Error).message);
        }
      }),
    );
}
