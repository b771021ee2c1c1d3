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

/** Indexing partitions: as many as the pool has threads, so that two can run at once. */
export const INDEX_PARTITIONS = 2;

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

/** The writes of one partition for the post events in a range, in order. */
export function partitionWrites(source: IndexSourceStore, range: OutboxRange, partition: number, partitions: number): Pending[] {
  const out: Pending[] = [];
  for (const [seq, type, id, text] of source.postEvents(range.after, range.upTo, partition, partitions)) {
    if (type === 'post_deleted') out.push({ seq: Number(seq), op: { op: 'delete', id: id.toString() } });
    // A post deleted since it was created is not indexed (its post_deleted event follows).
    else if (text !== null) out.push({ seq: Number(seq), op: { op: 'index', id: id.toString(), text } });
  }
  return out;
}

export async function indexRange(deps: IndexDeps, range: OutboxRange, partition: number, partitions = INDEX_PARTITIONS): Promise<IndexResult> {
  const started = performance.now();
  const pending = partitionWrites(deps.source, range, partition, partitions);
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
  let i = 0;
  while (i < pending.length) {
    const slot = deps.budget.take();
    if (!slot.ok) return result(pending[i].seq - 1, slot.waitMs, false);
    const bulk = pending.slice(i, i + slot.budget.batch);
    const answer = await deps.engine.bulk(bulk.map((p) => p.op));
    const after = deps.budget.record(answer, bulk.length);
    bulks++;
    // Rejected: everything before this request is done; the request itself goes again after a
    // back-off of one interval at the reduced rate.
    if (!answer.accepted) return result(pending[i].seq - 1, 1000 / after.rate, true);
    writes += bulk.length;
    i += bulk.length;
  }
  return result(range.upTo, 0, false);
}
