// Keep-alive heartbeats: an activity scheduled with a heartbeat timeout that does not heartbeat itself
// (the short calls: submit, place, catalogue, deploy; workflows/pipeline/activity-options.ts) heartbeats
// anyway while it runs, every third of its timeout, repeating the last details it sent (so a watch's
// progress is never replaced). The point is the other case: a task the server recorded as started but no
// worker ever ran — the answer to the poll (or the eager dispatch in a workflow task's answer) lost while
// the server was overloaded, its persistence writes timing out — is then retried after its heartbeat
// timeout, not after its whole start-to-close timeout (issue #31: submitJob stalled 2 min on a loaded
// `tandem dev`). An activity that ends within a third of its timeout sends none.
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';

export function keepAlive(ctx: Context): ActivityInterceptors {
  return {
    inbound: {
      async execute(input, next) {
        const timeout = ctx.info.heartbeatTimeoutMs;
        if (ctx.info.isLocal || !timeout) return next(input);
        const every = Math.max(1000, Math.floor(timeout / 3));
        let last = Date.now();
        let details: unknown = ctx.info.heartbeatDetails;
        const own = ctx.heartbeat;
        // The activity's own heartbeats (Context.heartbeat and the module-level heartbeat() alike) go through here.
        (ctx as { heartbeat: (d?: unknown) => void }).heartbeat = (d?: unknown) => {
          last = Date.now();
          details = d;
          own(d);
        };
        const timer = setInterval(() => {
          if (Date.now() - last < every) return;
          last = Date.now();
          own(details);
        }, every);
        try {
          return await next(input);
        } finally {
          clearInterval(timer);
        }
      },
    },
  };
}
