// The activity interceptor every Tandem worker installs: how long each activity took and how it
// ended (tandem_activity_duration_seconds), and the stage/site an activity works for added to its
// `Context.log` lines (observe/log.ts), read from its input where the input names them.
import { CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { metrics } from './metrics.js';

/** The stage, site and job attempt an activity input names (submitJob, awaitJob's ref, quota, …). */
export function inputAttributes(args: unknown[]): Record<string, unknown> {
  const a = args[0];
  if (!a || typeof a !== 'object') return {};
  const i = a as { stage?: unknown; site?: unknown; ref?: { site?: unknown; name?: unknown }; name?: unknown };
  const out: Record<string, unknown> = {};
  if (typeof i.stage === 'string') out.stage = i.stage;
  const site = typeof i.site === 'string' ? i.site : typeof i.ref?.site === 'string' ? i.ref.site : undefined;
  if (site) out.site = site;
  // A job's deterministic name ends in -<stage>-<attempt> (workflows/pipeline/identity.ts).
  const name = typeof i.name === 'string' ? i.name : typeof i.ref?.name === 'string' ? i.ref.name : undefined;
  const m = name ? /-(preprocess|train)-(\d+)$/.exec(name) : null;
  if (m) {
    out.stage ??= m[1];
    out.jobAttempt = Number(m[2]);
  }
  return out;
}

export function observeActivities(ctx: Context): ActivityInterceptors {
  let attrs: Record<string, unknown> = {};
  return {
    inbound: {
      async execute(input, next) {
        attrs = inputAttributes(input.args);
        const t0 = performance.now();
        const activity = ctx.info.activityType;
        let outcome = 'failed';
        try {
          const r = await next(input);
          outcome = 'completed';
          return r;
        } catch (e) {
          if (e instanceof CancelledFailure) outcome = 'cancelled';
          throw e;
        } finally {
          metrics.activityDuration.observe({ activity, outcome }, (performance.now() - t0) / 1000);
        }
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next({ ...input, ...attrs }),
    },
  };
}
