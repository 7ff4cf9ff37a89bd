// A saga stack: each side effect pushes its undo; on failure or cancellation they run newest first,
// in a scope that the cancellation itself cannot interrupt.
import { CancellationScope, log } from '@temporalio/workflow';

export interface Compensation {
  id: string;
  description: string;
  /** What it did, in the past tense, for a run's summary of how it ended ("cancelled train job 42"). */
  done?: string;
  run: () => Promise<void>;
}

export class Saga {
  private stack: Compensation[] = [];

  push(c: Compensation): void {
    this.stack.push(c);
  }

  /** Drops an undo that is no longer needed (its side effect finished or was undone). */
  discard(id: string): void {
    this.stack = this.stack.filter((c) => c.id !== id);
  }

  get pending(): readonly Compensation[] {
    return this.stack;
  }

  /** Runs every compensation in reverse order; one that fails is reported and the rest still run. */
  async compensate(onEach: (c: Compensation, error?: unknown) => void): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      while (this.stack.length > 0) {
        const c = this.stack.pop()!;
        try {
          await c.run();
          onEach(c);
        } catch (error) {
          log.error('compensation failed', { compensation: c.description, error: String(error) });
          onEach(c, error);
        }
      }
    });
  }
}
