// The outbox: every change others react to is written to `events` in the transaction that makes
// it. Consumers keep their position in `event_consumers`; the supervisor's dispatcher hands each
// batch of new events to a piscina task and advances the position only after the task succeeded,
// so after a crash or restart processing resumes at the first unprocessed event (at least once).
import { Gauge, type Registry } from 'prom-client';
import type { Sqlite } from '../store/sqlite';
import type { BackgroundContext, BackgroundModule } from '../server/background';
import type { FanoutRange, FanoutResult } from './fanout';
import { FANOUT_CONSUMER, OutboxCursor } from './outbox-cursor';

/**
 * Events per task at most. A task of 5,000 posts to 550 timelines took 8.4–8.8 ms (the task
 * alone); a backlog larger than that is worked off in tasks back to back.
 */
const BATCH = 5000;

const cursors = new WeakMap<Sqlite, OutboxCursor>();
function fanoutCursor(db: Sqlite): OutboxCursor {
  let c = cursors.get(db);
  if (!c) {
    c = new OutboxCursor(db, FANOUT_CONSUMER);
    cursors.set(db, c);
  }
  return c;
}

/**
 * How long after a task's start the next may start, while events keep coming. A task's cost is
 * mostly one rewrite per home timeline it touches, whatever the number of new ids it adds there, so
 * a task that gathers more posts makes each post cheaper. Under a light load tasks are small and
 * start at most every 25 ms; once a task has fanned out `HEAVY_TASK_POSTS` or more (about 20,000
 * posts a second at the short gap), the next waits 100 ms from its start. Posts, not events: a load
 * of likes touches no timeline, and gains nothing from waiting. In the post benchmark (256
 * connections) that gap served 5–27 % more posts a second than 25 ms, in eight interleaved pairs,
 * and halved the fan-out's CPU per post; the longer lag costs readers nothing, since they merge the
 * posts not fanned out yet (timeline.ts). A post made while the fan-out is idle, or after a small
 * task, is dispatched as soon as the writer reports it durable and the short gap allows.
 */
function taskGapMs(lastTaskPosts: number): number {
  return lastTaskPosts >= HEAVY_TASK_POSTS ? HEAVY_GAP_MS : LIGHT_GAP_MS;
}
const LIGHT_GAP_MS = 25;
const HEAVY_GAP_MS = 100;
const HEAVY_TASK_POSTS = 500;
/** The last task's start and the posts it fanned out (0 until it has succeeded). */
const lastTask = new WeakMap<Sqlite, { start: number; posts: number }>();

/**
 * Hands the pending events to the fan-out task, in order, a batch at a time. It keeps going only
 * while batches are full (a backlog); otherwise the next tick picks up what arrived meanwhile.
 * The final run at shutdown takes everything.
 */
export async function dispatchFanout(ctx: BackgroundContext, final = false): Promise<void> {
  const cursor = fanoutCursor(ctx.sqlite);
  for (let first = true; ; first = false) {
    const last = cursor.last();
    const newest = cursor.newest();
    if (newest <= last) return;
    const previous = lastTask.get(ctx.sqlite);
    if (first && !final && previous && performance.now() - previous.start < taskGapMs(previous.posts)) return;
    const range: FanoutRange = { after: last, upTo: Math.min(newest, last + BATCH) };
    const task = { start: performance.now(), posts: 0 };
    lastTask.set(ctx.sqlite, task);
    task.posts = (await ctx.runTask<FanoutResult>({ task: 'social.fanout', payload: range })).posts;
    await cursor.advance(ctx.writes, range.upTo);
    if (!final && range.upTo - last < BATCH) return;
  }
}

/**
 * Events every consumer has processed are kept this long, for an operator looking into what
 * happened, and then deleted: the outbox is a queue, not a history (docs/social.md).
 */
export const OUTBOX_RETENTION_MS = 60 * 60 * 1000;
/** Events deleted per write: a few milliseconds of the writer's time, between requests' groups. */
const PRUNE_BATCH = 2000;
const PRUNE_EVERY_MS = 10_000;
/**
 * A run stops after this long even with a backlog left (the next run goes on), so that a long
 * backlog (a first start on a large outbox) neither holds up shutdown, which waits for running
 * jobs, nor keeps the writer busy with deletes for more than a tenth of the time.
 */
const PRUNE_RUN_MS = 1000;

/**
 * Deletes the processed events older than the retention, a batch per write, for at most
 * `PRUNE_RUN_MS`; returns how many.
 */
export async function pruneOutbox(ctx: Pick<BackgroundContext, 'writes'>, now = Date.now()): Promise<number> {
  // The writer files posts under their authors only after new posts, so the filing's position
  // would otherwise stay behind the likes and follows made since the last post, holding their
  // events back for as long as nobody posts. Filing moves it to the newest event.
  await ctx.writes.run('indexAuthorPosts', { now: new Date(now).toISOString() });
  const before = new Date(now - OUTBOX_RETENTION_MS).toISOString();
  const deadline = performance.now() + PRUNE_RUN_MS;
  let deleted = 0;
  for (;;) {
    const n = await ctx.writes.run('pruneOutbox', { before, limit: PRUNE_BATCH });
    deleted += n;
    if (n < PRUNE_BATCH || performance.now() > deadline) return deleted;
  }
}

/** Events kept in the outbox: they are only ever deleted from the oldest on, so no gaps. */
function outboxEvents(db: Sqlite): number {
  return (db.prepare('SELECT COALESCE(MAX(seq) - MIN(seq) + 1, 0) FROM events').pluck().get() as number) ?? 0;
}

export const socialModule: BackgroundModule = {
  jobs: (ctx) => [
    // Woken by the writer when new posts are durable, so a post's fan-out starts at once when the
    // fan-out is idle; the 10 ms tick covers the rest (follows, and posts made under load).
    { name: 'social.fanout', everyMs: 10, flushOnStop: true, wakeOn: ctx.newPosts, run: dispatchFanout },
    { name: 'social.pruneOutbox', everyMs: PRUNE_EVERY_MS, run: (c) => pruneOutbox(c).then(() => undefined) },
  ],
  gauges(registry: Registry, ctx: BackgroundContext) {
    new Gauge({
      name: 'perch_outbox_events',
      help: 'Events kept in the outbox: not yet processed by every consumer, or processed within the retention.',
      registers: [registry],
      collect() {
        this.set(outboxEvents(ctx.sqlite));
      },
    });
    new Gauge({
      name: 'perch_fanout_lag_events',
      help: 'Outbox events not yet processed by the home-timeline fan-out.',
      registers: [registry],
      collect() {
        this.set(fanoutCursor(ctx.sqlite).lag().events);
      },
    });
    new Gauge({
      name: 'perch_fanout_lag_seconds',
      help: 'Age of the oldest outbox event not yet processed by the fan-out.',
      registers: [registry],
      collect() {
        this.set(fanoutCursor(ctx.sqlite).lag().seconds);
      },
    });
  },
};

/** Counts and fan-out lag for `perch status`. */
export function socialStatus(db: Sqlite): Record<string, number> {
  const count = (sql: string) => db.prepare(sql).pluck().get() as number;
  const lag = fanoutCursor(db).lag();
  return {
    posts: count('SELECT COUNT(*) FROM posts WHERE deleted_at IS NULL'),
    follows: count('SELECT COUNT(*) FROM follows'),
    likes: count('SELECT COUNT(*) FROM likes'),
    media: count('SELECT COUNT(*) FROM media'),
    outbox_events: outboxEvents(db),
    fanout_lag_events: lag.events,
    fanout_lag_seconds: Math.round(lag.seconds * 1000) / 1000,
  };
}
