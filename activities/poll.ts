// The pause between two job-status polls, shared by every watch activity (awaitJob, watchAt).
import { CancelledFailure, type Context } from '@temporalio/activity';

/** The pause between two status polls; a cancelled watch says so in the log before it stops. */
export async function pollPause(ctx: Context, ms: number, jobId: string): Promise<void> {
  try {
    await ctx.sleep(ms);
  } catch (e) {
    if (e instanceof CancelledFailure) ctx.log.info('stopped watching job (cancelled)', { jobId });
    throw e;
  }
}
