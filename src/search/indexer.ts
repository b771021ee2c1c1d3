// The indexing consumer: an outbox consumer per partition that reads post_created and
// post_deleted events and sends them to the search engine in bulk requests, within the write
// budget every partition shares (budget.ts). A partition takes a slot of the shared schedule
// before each bulk request, sends at most the budget's batch, and reports the engine's answer,
// which adapts the budget. When the schedule says wait, or the engine rejects a request, the task
// stops and answers how far it got: the dispatcher moves the partition's position only past the
// events whose writes the engine accepted (OutboxConsumer.doneUpTo), and the next task starts
// with the rejected request, after the wait. Nothing is dropped, and a pool thread never sleeps
// through a wait. Partitions split posts by id (core/partition.ts), so all the events of one post
// go through one partition, in order.
import type { OutboxRange } from '../outbox/consumer';
import type { SharedBudget } from './budget';
import type { IndexOp, SearchEngine } from './engine';
import type { IndexSourceStore } from './store';

/**
 * Indexing partitions: one. Two (one per pool thread) let indexing take both of the machine's
 * cores at once, and a pool thread that keeps a core busy delays the HTTP thread's wake-ups, which
 * costs the request path more than the CPU it takes (docs/search.md). One thread indexes many
 * times the post rate a server reaches, and the budget's schedule spaces the bulk requests of
 * every partition anyway. The code keeps the partitions, so a larger machine can have more.
 */
export const INDEX_PARTITIONS = 1;

export interface IndexResult {
  /** The last event processed: the range's end, or just before the first write not accepted. */
  upTo: number;
  /** Writes the engine accepted, and bulk requests sent (accepted or not). */
  writes: number;
  bulks: number;
  rejected: boolean;
  /** How long after this task the next should start: the schedule's wait, or a back-off. */
  waitMs: number;
  elapsedMs: number;
}

export interface IndexDeps {
  source: IndexSourceStore;
  engine: SearchEngine;
  budget: SharedBudget;
}

interface Pending {
  seq: number;
  op: IndexOp;
}

/** What a partition read of a range: its writes, and how many events they came from, up to which. */
export interface PartitionRead {
  writes: Pending[];
  events: number;
  lastSeq: number;
}

/**
 * The writes of one partition for the first `limit` of its post events in a range, in order. A
 * post deleted since it was created has no write for its creation, so there may be fewer writes
 * than events.
 */
export function partitionWrites(source: IndexSourceStore, range: OutboxRange, partition: number, partitions: number, limit = -1): PartitionRead {
  const writes: Pending[] = [];
  const rows = source.postEvents(range.after, range.upTo, partition, partitions, limit);
  for (const [seq, type, id, text] of rows) {
    if (type === 'post_deleted') writes.push({ seq, op: { op: 'delete', id } });
    // A post deleted since it was created is not indexed (its post_deleted event follows).
    else if (text !== null) writes.push({ seq, op: { op: 'index', id, text } });
  }
  return { writes, events: rows.length, lastSeq: rows.length > 0 ? rows[rows.length - 1][0] : range.after };
}

export async function indexRange(deps: IndexDeps, range: OutboxRange, partition: number, partitions = INDEX_PARTITIONS): Promise<IndexResult> {
  const started = performance.now();
  let writes = 0;
  let bulks = 0;
  const result = (upTo: number, waitMs: number, rejected: boolean): IndexResult => ({
    upTo,
    writes,
    bulks,
    rejected,
    waitMs: Math.max(0, Math.ceil(waitMs)),
    elapsedMs: performance.now() - started,
  });
  // The range is read a bulk request at a time, never further than the budget lets the task
  // send: a task that must stop for the schedule leaves the rest unread, and the next task
  // (which starts there) reads it once.
  let done = range.after;
  let batch = deps.budget.read().batch;
  for (;;) {
    const due = deps.budget.dueInMs();
    if (due > 0) return result(done, due, false);
    const read = partitionWrites(deps.source, { after: done, upTo: range.upTo }, partition, partitions, batch);
    // Fewer events than asked for: nothing of this partition's is left in the range after them.
    const readUpTo = read.events < batch ? range.upTo : read.lastSeq;
    if (read.writes.length === 0) {
      // Only creations of posts deleted since (or nothing): done with them, no request needed.
      done = readUpTo;
      if (done >= range.upTo) return result(range.upTo, 0, false);
      continue;
    }
    const slot = deps.budget.take();
    if (!slot.ok) return result(done, slot.waitMs, false);
    const bulk = read.writes.length > slot.budget.batch ? read.writes.slice(0, slot.budget.batch) : read.writes;
    const answer = await deps.engine.bulk(bulk.map((p) => p.op));
    const after = deps.budget.record(answer, bulk.length);
    bulks++;
    // Rejected: everything before this request is done; the request itself goes again after a
    // back-off of one interval at the reduced rate.
    if (!answer.accepted) return result(done, 1000 / after.rate, true);
    writes += bulk.length;
    done = bulk === read.writes ? readUpTo : bulk[bulk.length - 1].seq;
    if (done >= range.upTo) return result(range.upTo, 0, false);
    batch = after.batch;
  }
}
