// Notifications: made from the outbox's like, reply and follow events, kept per recipient with
// their preferences, listed and marked read over HTTP, and delivered in real time over /ws and to
// offline users by Web Push. Two stages, each with its own outbox position (docs/notifications.md):
//   - generation: a supervisor job woken by the outbox signal of its event types, which has the writer run
//     `generateNotifications` (generate.ts): preferences, aggregation, rows, a `notification`
//     event per row changed, and the position, in one transaction;
//   - delivery: an outbox consumer whose pool task (delivery.ts) reads those events and sends
//     the rows to the HTTP threads' sockets (publish/subscribe port) and, for recipients with no
//     socket open, to the supervisor's push sender (push-sender.ts), which calls push services.
import type { Capability } from '../capability';
import type { OutboxConsumer } from '../outbox/consumer';
import { OUTBOX_TICK_MS, outboxSignal } from '../outbox/module';
import { ThreadPubSub } from '../pubsub/port';
import type { BackgroundContext } from '../server/background';
import { log } from '../log';
import type { DeliveryResult } from './delivery';
import { MIGRATIONS } from './migrations';
import { clearStalePresence } from './presence';
import { PUSH_OUTCOMES, PushSender, type PushOutcome } from './push-sender';
import { newVapidKeys } from '../core/push-keys';
import { NotificationService } from './service';
import { ACTION_EVENTS, DELIVERY_CONSUMER, GENERATION_POSITION, NOTIFICATION_EVENT, NotificationStore } from './store';
import { PUSH_TOPIC } from './topics';
import { NotificationSockets } from './websocket';
import { notificationWrites, type NotificationWrites } from './writes';
import { NOTIFICATION_TASKS } from './tasks';

// Its routes are loaded by the HTTP threads alone, when they make them: the writer thread takes
// this module's operations and jobs and serves no route, and the routes' request schemas bring zod.
const routesModule = () => require('./routes') as typeof import('./routes');

export const deliveryConsumer: OutboxConsumer<DeliveryResult> = {
  name: DELIVERY_CONSUMER,
  tasks: NOTIFICATION_TASKS,
  task: 'notifications.deliver',
  batch: 2000,
  // Woken by the writer when the generation's events are durable (its own outbox signal: posts do
  // not wake it); no gap between tasks: a notification is due on its sockets within a second.
  everyMs: 10,
  lagMetric: 'perch_notification_delivery_lag',
  // It reads only the generation's events: it holds back no other event from pruning.
  types: [NOTIFICATION_EVENT],
};

/**
 * Events per generation run: one transaction of the writer, which other writes wait behind (with
 * one HTTP thread, requests too), so a backlog is worked off in short runs back to back.
 */
const GENERATE_BATCH = 500;
/**
 * The least time between two generation runs that new actions start. It is woken only by
 * likes, replies, follows and deletions (its outbox signal), so posts alone do not run it.
 */
const GENERATE_EVERY_MS = 10;

/** At shutdown, how long the push sender may take to finish what it holds. */
const PUSH_DRAIN_MS = 2000;

/** Counts a push request's outcome: made with the gauges, used by the supervisor's sender. */
let countPushDelivery: ((outcome: PushOutcome) => void) | undefined;

/**
 * The supervisor's push sender, fed by the delivery consumer over the publish/subscribe port. It
 * is made once the VAPID key pair exists (prepare makes it before the jobs start).
 */
function startPushSender(ctx: BackgroundContext, gone: Array<{ id: string; endpoint: string }>): PushSender | undefined {
  const keys = new NotificationStore(ctx.sqlite).vapidKeys();
  if (!keys) {
    log.error('no VAPID key pair: Web Push messages are not sent');
    return undefined;
  }
  const { subject, allow_insecure_endpoints: allowInsecure, retry_base_ms: retryBaseMs } = ctx.config.push;
  const sender = new PushSender({
    vapid: { subject, ...keys },
    allowInsecure,
    retryBaseMs,
    report: (outcome: PushOutcome) => countPushDelivery?.(outcome),
    gone: (target) => gone.push({ id: target.id, endpoint: target.endpoint }),
  });
  // Unreferenced: the port must not keep a stopping supervisor alive.
  new ThreadPubSub(0).subscribe(PUSH_TOPIC, (m) => {
    for (const { target, text } of m.items) sender.send(target, text);
  });
  return sender;
}

/**
 * Events of other types (posts, ...) the generation's position may lag behind before a run moves
 * it past them (a run reads up to the newest event): until then each look for work would scan
 * them again, and so would the lag gauge.
 */
const SKIP_AHEAD_EVENTS = 10_000;

/** The generation job: runs while action events wait. */
function generationJob(store: NotificationStore): (ctx: BackgroundContext) => Promise<void> {
  // Events up to here were seen to hold no action: the next look starts after them.
  let checked = 0;
  return async (ctx) => {
    const writes = ctx.writes.as<NotificationWrites>();
    const windowMs = ctx.config.notifications.aggregation_window_seconds * 1000;
    for (;;) {
      const newest = store.newestEvent();
      const pending = store.hasPendingActions(checked);
      if (!pending && newest - store.generationPosition() < SKIP_AHEAD_EVENTS) {
        checked = newest;
        return;
      }
      const result = await writes.run('generateNotifications', { limit: GENERATE_BATCH, windowMs, now: new Date().toISOString() });
      if (!result.more) return;
    }
  };
}

export const notifications: Capability = {
  name: 'notifications',
  migrations: MIGRATIONS,
  writes: notificationWrites,
  tasks: NOTIFICATION_TASKS,
  consumers: [deliveryConsumer],
  // The generation reads only these events: it holds back no other event from pruning.
  outboxPositions: [{ name: GENERATION_POSITION, types: ACTION_EVENTS, signal: true }],

  async prepare(ctx) {
    // No socket is open before the threads start: records left by a crash are stale.
    clearStalePresence(ctx.hot);
    const store = new NotificationStore(ctx.sqlite);
    if (store.vapidKeys()) return;
    // Written on the supervisor's own connection, once in the life of a data directory: before the
    // threads start, the writer may not run yet (with one HTTP thread it runs inside it).
    const keys = newVapidKeys();
    ctx.sqlite.transaction(() => store.ensureVapidKeys(keys.publicKey, keys.privateKey)).immediate();
    log.info('VAPID key pair generated for Web Push');
  },

  jobs(ctx) {
    const store = new NotificationStore(ctx.sqlite);
    const gone: Array<{ id: string; endpoint: string }> = [];
    const sender = ctx.config.push.enabled ? startPushSender(ctx, gone) : undefined;
    return [
      {
        name: 'notifications.generate',
        everyMs: GENERATE_EVERY_MS,
        tickMs: OUTBOX_TICK_MS,
        flushOnStop: true,
        wakeOn: ctx.signals.counter(outboxSignal(GENERATION_POSITION)),
        run: generationJob(store),
      },
      {
        name: 'notifications.deleteGoneSubscriptions',
        everyMs: 1000,
        flushOnStop: true,
        async run(c, final) {
          // At shutdown (after the delivery consumer's last run), the sender may finish first.
          const deadline = Date.now() + PUSH_DRAIN_MS;
          while (final && sender && sender.pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          if (gone.length === 0) return;
          const items = gone.splice(0, gone.length);
          const deleted = await c.writes.as<NotificationWrites>().run('deleteGonePushSubscriptions', { items });
          if (deleted > 0) log.info('push subscriptions deleted: their push service says they are gone', { deleted });
        },
      },
    ];
  },

  gauges(figures, ctx) {
    const store = new NotificationStore(ctx.sqlite);
    figures.gauge('perch_notification_generation_lag_events', 'Like, reply, follow and post deletion events not yet turned into notifications.', () => store.actionLag().events);
    figures.gauge('perch_notification_generation_lag_seconds', 'Age of the oldest event not yet turned into notifications.', () => store.actionLag().seconds);
    countPushDelivery = figures.counter(
      'perch_push_deliveries_total',
      'Web Push requests by outcome: delivered, retried (a try that will be repeated), gone (404/410, subscription deleted), failed, refused (private address), dropped (too many waiting).',
      'outcome',
      PUSH_OUTCOMES,
    );
  },

  http(ctx) {
    const store = new NotificationStore(ctx.sqlite);
    const service = new NotificationService(store, ctx.accounts, ctx.writes.as<NotificationWrites>(), ctx.config);
    const sockets = new NotificationSockets(ctx);
    ctx.me.add('unread_notifications', (userId) => service.unreadCount(userId));
    return {
      routes: routesModule().notificationRoutes(service, ctx.cursors),
      webSockets: [{ path: '/ws', behavior: sockets.behavior() }],
      stopping: () => sockets.endAll(),
      close: () => sockets.close(),
    };
  },

  status({ sqlite }) {
    const store = new NotificationStore(sqlite);
    const lag = store.actionLag();
    return { ...store.counts(), generation_lag_events: lag.events, generation_lag_seconds: Math.round(lag.seconds * 1000) / 1000 };
  },
};
