// Outbox consumers: background work fed with the outbox's events in order, at least once. A
// consumer is a pool task that takes a range of event numbers; the supervisor's dispatcher hands
// it each batch of new events and moves the consumer's position past the batch only after the
// task succeeded, so after a crash or restart processing resumes at the first event not
// processed. Tasks must be idempotent: a range may run again.
import type { BackgroundContext } from '../server/background';
import type { TaskTable } from '../workers/context';
import { outboxOf, type PositionSpec } from './store';
import type { OutboxWrites } from './writes';

/** A range of events: after the last one processed (exclusive), up to the batch's last. */
export interface OutboxRange {
  after: number;
  upTo: number;
}

/** A position held by something other than a dispatched consumer (store.ts, PositionSpec). */
export type OutboxPosition = PositionSpec;

export interface OutboxConsumer<R = unknown> {
  /** The position's name in event_consumers. */
  name: string;
  /** The pool task that processes a range (it takes an OutboxRange), and its table. */
  tasks: TaskTable;
  task: string;
  /** Events per task at most; a backlog is worked off in tasks back to back. */
  batch: number;
  /**
   * The least time between two runs of its dispatcher that new events start: under a steady load
   * it runs about once a period. (With nothing new it does not run: the writer's signal announces
   * every event, and the outbox module's tick only catches what another process appended.)
   */
  everyMs: number;
  /**
   * The least time from one task's start to the next's while events keep coming, given what
   * the last task answered (undefined before one succeeded). Default: none.
   */
  gapMs?(last: R | undefined): number;
  /**
   * For a consumer that may stop before the end of its range (a throttled one: search indexing),
   * the last event its task processed, from what it answered; the position moves only that far,
   * and the rest waits for the next run. Default: the whole range.
   */
  doneUpTo?(result: R): number;
  /**
   * Told of each task's answer once the position has moved past what it did, in the supervisor:
   * for work that follows from it (search indexing wakes the job that applies its writes).
   */
  afterTask?(result: R, ctx: BackgroundContext): void;
  /** Prefix of its lag gauges in /metrics (`<prefix>_events`, `<prefix>_seconds`). */
  lagMetric?: string;
  /**
   * The only event types its task reads, when it reads only some: its position then holds back
   * only those from pruning (store.ts, PositionSpec). Default: every event.
   */
  types?: readonly string[];
}

const lastTasks = new WeakMap<OutboxConsumer, { start: number; result: unknown }>();
/**
 * Per connection and consumer with `types`: the events up to here were seen to hold none of its
 * types. Kept in memory only: after a restart the look starts again from the position.
 */
const seenWithout = new WeakMap<object, Map<string, number>>();

/** What is left of the gap after `task` (its start and answer), in milliseconds: 0 or less, none. */
function gapLeft(consumer: OutboxConsumer, task: { start: number; result: unknown }): number {
  return (consumer.gapMs?.(task.result) ?? 0) - (performance.now() - task.start);
}

/**
 * Hands the pending events to the consumer's task, in order, a batch at a time. It keeps going
 * only while batches are full (a backlog); otherwise the next wake-up or tick picks up what
 * arrived meanwhile. The final run at shutdown takes everything. While events wait out the gap
 * after a task, it answers how many milliseconds are left of the gap, and at least a period
 * (everyMs, the pace the wake-ups keep too): the job runs again then, instead of looking at
 * every tick.
 */
export async function dispatchOutbox(consumer: OutboxConsumer, ctx: BackgroundContext, final = false): Promise<number | undefined> {
  const outbox = outboxOf(ctx.sqlite);
  const writes = ctx.writes.as<OutboxWrites>();
  for (let first = true; ; first = false) {
    // Within the gap after its last task a consumer gets no task, whatever is new: the
    // dispatcher then reads nothing either (a post load wakes it many times per gap).
    const previous = lastTasks.get(consumer);
    if (first && !final && previous && consumer.gapMs) {
      const left = gapLeft(consumer, previous);
      if (left > 0) return Math.max(left, consumer.everyMs);
    }
    const last = outbox.position(consumer.name);
    const newest = outbox.newest();
    if (newest <= last) return;
    let after = last;
    if (consumer.types) {
      // Events of other types are nothing to this consumer: a range without its own gets no task
      // (a pool thread woken, a range read, for nothing). The position moves past such events
      // only once they fill a batch, or at the final run: one write then, not one per wake-up.
      let seen = seenWithout.get(ctx.sqlite);
      if (!seen) seenWithout.set(ctx.sqlite, (seen = new Map()));
      const next = outbox.firstOfTypes(consumer.types, Math.max(last, seen.get(consumer.name) ?? 0), newest);
      if (next === null) {
        seen.set(consumer.name, newest);
        if (final || newest - last >= consumer.batch) await writes.run('advanceConsumer', { name: consumer.name, seq: newest, now: new Date().toISOString() });
        return;
      }
      after = next - 1;
    }
    const range: OutboxRange = { after, upTo: Math.min(newest, after + consumer.batch) };
    const task: { start: number; result: unknown } = { start: performance.now(), result: undefined };
    lastTasks.set(consumer, task);
    task.result = await ctx.runTask(consumer.tasks, consumer.task, range as never);
    const upTo = consumer.doneUpTo ? Math.max(last, Math.min(range.upTo, consumer.doneUpTo(task.result))) : range.upTo;
    if (upTo > last) await writes.run('advanceConsumer', { name: consumer.name, seq: upTo, now: new Date().toISOString() });
    consumer.afterTask?.(task.result, ctx);
    // A task that stopped early waits for its next run, after its gap and at least a period, even
    // at shutdown: what it left stays in the outbox for the next start.
    if (upTo < range.upTo) {
      if (final) return;
      return Math.max(consumer.everyMs, gapLeft(consumer, task));
    }
    if (!final && range.upTo - after < consumer.batch) return;
  }
}
