// The click queue: a durable queue in LMDB, appended to by the redirect path without waiting
// (lmdb-js commits every un-awaited put of one event-loop turn in one batch, off the thread), and
// drained in batches by a pool task into SQLite aggregates. Keys are [ms, node id, sequence]:
// time-ordered, and unique across threads and processes because node ids are leased.
import { aggregateClicks, type ClickEvent } from '../core/clicks';
import { errorFields, log } from '../log';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { LinkStore } from './store';

export const CLICK_QUEUE_DB = 'link_click_queue';

export type ClickKey = [number, number, number];
/** [code, referrer host ('' when none), 1 for a bot else 0]. */
export type ClickValue = [string, string, number];

function onClickWriteError(err: unknown): void {
  log.error('click enqueue failed', errorFields(err));
}

export function openClickQueue(hot: HotStore): LmdbDb<ClickValue, ClickKey> {
  return hot.db<ClickValue, ClickKey>(CLICK_QUEUE_DB);
}

export class ClickQueue {
  readonly db: LmdbDb<ClickValue, ClickKey>;
  private seq = 0;
  private lastWrite: Promise<boolean> | undefined;

  constructor(hot: HotStore, private readonly nodeId: number) {
    this.db = openClickQueue(hot);
  }

  /** Appends a click; never waits. */
  push(code: string, atMs: number, referrer: string, bot: boolean): void {
    const p = this.db.put([atMs, this.nodeId, ++this.seq], [code, referrer, bot ? 1 : 0]);
    // lmdb-js hands every write of one batch the same promise; one handler per batch is enough.
    if (p !== this.lastWrite) {
      this.lastWrite = p;
      p.catch(onClickWriteError);
    }
  }
}

export interface QueueState {
  depth: number;
  /** Seconds since the oldest queued click; 0 when empty. */
  lagSeconds: number;
}

export function clickQueueState(db: LmdbDb<ClickValue, ClickKey>, nowMs = Date.now()): QueueState {
  const depth = (db.getStats() as { entryCount: number }).entryCount;
  let lagSeconds = 0;
  for (const key of db.getKeys({ limit: 1 })) lagSeconds = Math.max(0, (nowMs - (key as ClickKey)[0]) / 1000);
  return { depth, lagSeconds };
}

/**
 * Moves up to `maxBatches` batches from the queue into the aggregates. Each batch is committed to
 * SQLite first and removed from the queue second: a crash in between counts that batch twice
 * rather than losing it (at least once).
 */
export function drainClicks(db: LmdbDb<ClickValue, ClickKey>, store: LinkStore, batchSize = 5000, maxBatches = 40): number {
  let drained = 0;
  for (let b = 0; b < maxBatches; b++) {
    db.resetReadTxn();
    const keys: ClickKey[] = [];
    const events: ClickEvent[] = [];
    for (const { key, value } of db.getRange({ limit: batchSize })) {
      const k = key as ClickKey;
      keys.push(k);
      events.push({ code: value[0], atMs: k[0], referrer: value[1], bot: value[2] === 1 });
    }
    if (keys.length === 0) break;
    store.addClicks(aggregateClicks(events));
    db.transactionSync(() => {
      for (const k of keys) db.removeSync(k);
    });
    drained += keys.length;
    if (keys.length < batchSize) break;
  }
  return drained;
}
