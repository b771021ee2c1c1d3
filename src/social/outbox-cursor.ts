// A consumer's position in the outbox (`events`): the last event it processed, kept in
// `event_consumers`, against the newest event committed. The fan-out (outbox.ts) and the writer's
// filing of posts under their authors (store.ts) are such consumers.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import type { WriterClient } from './group-commit';

/** The home-timeline fan-out (outbox.ts). */
export const FANOUT_CONSUMER = 'fanout';
/** The writer's filing of posts under their authors in `author_posts` (store.ts, migration 004). */
export const AUTHOR_INDEX_CONSUMER = 'author_index';
/**
 * Every consumer of the outbox. An event is kept until each of them has processed it (a consumer
 * without a position yet counts as at the start), so one added here holds back the pruning of
 * everything it has not seen; it cannot get back events pruned before it existed, and must build
 * its starting state from the tables themselves.
 */
export const OUTBOX_CONSUMERS: readonly string[] = [FANOUT_CONSUMER, AUTHOR_INDEX_CONSUMER];

export class OutboxCursor {
  private readonly lastStmt: Statement;
  private readonly maxStmt: Statement;
  private readonly oldestStmt: Statement;

  constructor(
    db: Sqlite,
    readonly consumer: string,
  ) {
    this.lastStmt = db.prepare('SELECT last_seq FROM event_consumers WHERE name = ?').pluck();
    this.maxStmt = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck();
    this.oldestStmt = db.prepare('SELECT created_at FROM events WHERE seq > ? ORDER BY seq LIMIT 1').pluck();
  }

  last(): number {
    return (this.lastStmt.get(this.consumer) as number | undefined) ?? 0;
  }

  /** The newest committed event's sequence number. */
  newest(): number {
    return (this.maxStmt.get() as number | undefined) ?? 0;
  }

  /**
   * Records that every event up to `seq` was processed. The write goes through the writer,
   * in its next group commit, like the request path's writes: written on this connection every few
   * milliseconds, it took SQLite's write lock between the writer's commits, and whichever side
   * found it taken slept in the busy handler for a millisecond or more (posts stalled behind it).
   */
  advance(writes: WriterClient, seq: number): Promise<void> {
    return writes.run('advanceConsumer', { name: this.consumer, seq, now: new Date().toISOString() });
  }

  /** Events not yet processed, and the age in seconds of the oldest of them. */
  lag(now = Date.now()): { events: number; seconds: number } {
    const last = this.last();
    const events = Math.max(0, this.newest() - last);
    if (events === 0) return { events, seconds: 0 };
    const oldest = this.oldestStmt.get(last) as string | undefined;
    return { events, seconds: oldest ? Math.max(0, (now - Date.parse(oldest)) / 1000) : 0 };
  }
}
