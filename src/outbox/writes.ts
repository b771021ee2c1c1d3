// The outbox's own write operations, run by the writer like every capability's.
import type { Sqlite } from '../store/sqlite';
import { outboxOf, type PositionSpec } from './store';

/** Every position that holds events back from pruning, known when the writer starts. */
export function outboxWrites(positions: readonly PositionSpec[]) {
  return (db: Sqlite) => {
    const outbox = outboxOf(db);
    return {
      /** A consumer's position: every event up to `seq` was processed. */
      advanceConsumer(a: { name: string; seq: number; now: string }): void {
        outbox.setPosition(a.name, a.seq, a.now);
      },
      /** Deletes up to `limit` events made before `before` that every position is done with. */
      pruneOutbox(a: { before: string; limit: number }): number {
        return outbox.prune(positions, a.before, a.limit);
      },
    };
  };
}

export type OutboxWrites = ReturnType<ReturnType<typeof outboxWrites>>;
