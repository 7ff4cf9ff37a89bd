// A stage's booking against its tenant's quota at the site its job runs on (TANDEM_QUOTAS_FILE).
// The hold follows the job: placed or failed over to another site, it is released at the old one.
import { sleep } from '@temporalio/workflow';
import { failure } from '../../contract/failures.js';
import type { PipelineSpec, Runtime } from '../../contract/pipeline.js';
import type { TimelineEntry } from '../../contract/status.js';
import type { Saga } from '../saga.js';
import type { PipelineActivities } from './activity-options.js';
import { holdIdOf } from './identity.js';
import { stageAmount, type JobStage } from './job-shape.js';
import { amounts } from './messages.js';
import { PATCHES, type PatchId } from './patches.js';
import { quotaBackoffMs, quotaTimeLeftMs } from './retry.js';

/** The part of the run a hold needs (context.ts builds the holds, so this cannot name the run's type). */
interface Run {
  spec: PipelineSpec;
  workflowId: string;
  saga: Saga;
  short: PipelineActivities;
  /** Admission on the run's own queue (local activities since PATCHES.leanHistory). */
  bookkeeping: PipelineActivities;
  has(id: PatchId): boolean;
  record(e: Omit<TimelineEntry, 'at'>): void;
}

export class QuotaHolds {
  /** The site whose ledger holds each stage's resources (only stages with a quota there). */
  private readonly sites: Partial<Record<JobStage, string>> = {};

  constructor(private readonly run: Run) {}

  /** Books the stage's resources, waiting (with backoff, within the deadline) while the tenant's
   *  other stages hold the rest. `admitVia`: the activities of the job's site queue (site-queues.ts),
   *  whose workers know which site a stage pinned to a runtime runs at. */
  async hold(stage: JobStage, runtime: Runtime, site?: string, admitVia?: PipelineActivities): Promise<void> {
    if (!this.run.has(PATCHES.quota)) return;
    const { spec, workflowId, saga, short, bookkeeping } = this.run;
    const admit = admitVia ?? bookkeeping;
    const holdId = holdIdOf(workflowId, stage);
    const amount = stageAmount(spec, stage);
    const waitStart = Date.now();
    for (let round = 0; ; round++) {
      const r = await admit.admitQuota({ holdId, tenant: spec.tenant, stage, runtime, site, ...amount });
      if (r.admitted) {
        if (this.sites[stage] && this.sites[stage] !== r.site) await this.release(stage);
        if (r.managed && !this.sites[stage]) {
          this.sites[stage] = r.site;
          saga.push({ id: `release-${holdId}@${r.site}`, description: `release ${stage}'s quota hold at ${r.site}`, done: `released quota hold ${holdId} at ${r.site}`, run: () => short.releaseQuota({ site: r.site, holdId }).then(() => undefined) });
          this.run.record({ kind: 'quota', stage, site: r.site, message: `holding ${amounts(amount)} of tenant ${spec.tenant}'s quota at ${r.site} (${amounts(r.usage)} in use of ${amounts(r.quota)})` });
        }
        return;
      }
      const waited = Math.round((Date.now() - waitStart) / 1000);
      if (r.never) throw failure('QuotaExceeded', `${stage}: ${r.reason}`);
      const left = quotaTimeLeftMs(spec.deadline, Date.now());
      if (left <= 0) throw failure('QuotaExceeded', `${stage}: no room in tenant ${spec.tenant}'s quota at ${r.site} before the deadline ${spec.deadline} (waited ${waited}s): ${r.reason}`);
      if (round === 0) this.run.record({ kind: 'quota-wait', stage, site: r.site, message: `waiting for quota at ${r.site}: ${r.reason}` });
      await sleep(quotaBackoffMs(r.retryIntervalMs, round, left));
    }
  }

  async release(stage: JobStage): Promise<void> {
    const site = this.sites[stage];
    if (!site) return;
    delete this.sites[stage];
    const holdId = holdIdOf(this.run.workflowId, stage);
    await this.run.short.releaseQuota({ site, holdId });
    this.run.saga.discard(`release-${holdId}@${site}`);
    this.run.record({ kind: 'quota', stage, site, message: `released ${stage}'s quota hold at ${site}` });
  }
}
