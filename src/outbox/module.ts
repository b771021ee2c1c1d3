// The outbox as a module of its own: every capability that appends events or consumes them
// (capability.ts: consumers, outboxPositions) goes through it. It gives the writer the position
// and pruning operations and the signals raised once new events are durable: "outbox" for any
// event, and "outbox:<position>" for a position that reads only some types, for events of those.
// Whoever reads the outbox is woken by its signal when there is something for it, so at rest and
// under a load of other events it does not run at all. It gives the supervisor one dispatcher
// job per consumer, the pruning job and the gauges.
import type { Capability, StatusSection } from '../capability';
import type { BackgroundContext } from '../server/background';
import { dispatchOutbox, type OutboxConsumer } from './consumer';
import { outboxOf, type PositionSpec } from './store';
import { outboxWrites, type OutboxWrites } from './writes';

export const OUTBOX_SIGNAL = 'outbox';

/** The signal of a position that reads only some event types: raised for events of those. */
export function outboxSignal(position: string): string {
  return `${OUTBOX_SIGNAL}:${position}`;
}

/**
 * How often a job woken by an outbox signal runs when nothing wakes it. The signals announce every
 * event this server appends, so the tick only catches what another process appended and retries a
 * run that failed; a consumer's gap between tasks is waited out by a timer of its own (consumer.ts).
 */
export const OUTBOX_TICK_MS = 1000;

/**
 * Events every position is done with are kept this long, for an operator looking into what
 * happened, and then deleted: the outbox is a queue, not a history (docs/architecture.md).
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

/** Deletes processed events older than the retention, a batch per write, for at most PRUNE_RUN_MS. */
export async function pruneOutbox(ctx: Pick<BackgroundContext, 'writes'>, now = Date.now()): Promise<number> {
  const writes = ctx.writes.as<OutboxWrites>();
  const before = new Date(now - OUTBOX_RETENTION_MS).toISOString();
  const deadline = performance.now() + PRUNE_RUN_MS;
  let deleted = 0;
  for (;;) {
    const n = await writes.run('pruneOutbox', { before, limit: PRUNE_BATCH });
    deleted += n;
    if (n < PRUNE_BATCH || performance.now() > deadline) return deleted;
  }
}

/** The outbox module for these capabilities' consumers and positions. */
export function outboxCapability(capabilities: readonly Capability[]): Capability {
  const consumers: OutboxConsumer[] = capabilities.flatMap((c) => c.consumers ?? []);
  const positions: PositionSpec[] = [
    ...consumers.map((c) => ({ name: c.name, types: c.types, signal: c.types !== undefined })),
    ...capabilities.flatMap((c) => c.outboxPositions ?? []),
  ];
  /** The positions with a signal of their own: those that read only some types and wait for them. */
  const typed = positions.filter((p) => p.types !== undefined && p.signal);
  return {
    name: 'outbox',
    writes: outboxWrites(positions),
    signals: [OUTBOX_SIGNAL, ...typed.map((p) => outboxSignal(p.name))],
    writerSignals: (db) => {
      const outbox = outboxOf(db);
      return [
        { name: OUTBOX_SIGNAL, moved: outbox.watch() },
        ...typed.map((p) => ({ name: outboxSignal(p.name), moved: outbox.watch(p.types) })),
      ];
    },
    jobs: (ctx) => [
      ...consumers.map((consumer) => ({
        name: `outbox.${consumer.name}`,
        everyMs: consumer.everyMs,
        tickMs: OUTBOX_TICK_MS,
        flushOnStop: true,
        wakeOn: ctx.signals.counter(consumer.types ? outboxSignal(consumer.name) : OUTBOX_SIGNAL),
        run: (c: BackgroundContext, final: boolean) => dispatchOutbox(consumer, c, final),
      })),
      { name: 'outbox.prune', everyMs: PRUNE_EVERY_MS, run: (c) => pruneOutbox(c).then(() => undefined) },
    ],
    gauges(figures, ctx) {
      const outbox = outboxOf(ctx.sqlite);
      figures.gauge(
        'perch_outbox_events',
        'Events kept in the outbox: not yet processed by every consumer, or processed within the retention.',
        () => outbox.kept(),
      );
      for (const consumer of consumers) {
        if (!consumer.lagMetric) continue;
        const lag = () => outbox.lag(consumer.name, Date.now(), consumer.types);
        figures.gauge(`${consumer.lagMetric}_events`, `Outbox events not yet processed by the ${consumer.name} consumer.`, () => lag().events);
        figures.gauge(`${consumer.lagMetric}_seconds`, `Age of the oldest outbox event not yet processed by the ${consumer.name} consumer.`, () => lag().seconds);
      }
    },
    status({ sqlite }) {
      const outbox = outboxOf(sqlite);
      const section: StatusSection = { events: outbox.kept(), newest: outbox.newest() };
      for (const consumer of consumers) {
        const lag = outbox.lag(consumer.name, Date.now(), consumer.types);
        section[consumer.name] = { lag_events: lag.events, lag_seconds: Math.round(lag.seconds * 1000) / 1000 };
      }
      return section;
    },
  };
}
