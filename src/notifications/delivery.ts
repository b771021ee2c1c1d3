// Delivery of notifications, as an outbox consumer's pool task: for a range of events, each
// `notification` event (appended by the generation for every row it made or changed) is sent as
// the row stands now to the recipient's WebSockets, through the publish/subscribe port to every
// HTTP thread (the pool thread is a worker thread of the same process), and, when the recipient
// has no socket open anywhere at that moment, to each of their Web Push subscriptions, through the
// same port to the supervisor's push sender (push-sender.ts says why it runs there).
//
// At least once: the dispatcher moves the consumer's position only after the task succeeded, so
// after a crash a range is delivered again. A row changed twice before its delivery is sent twice
// as it stands then. Clients dedupe by (id, updated_at) (docs/notifications.md).
import type { OutboxRange } from '../outbox/consumer';
import type { Sqlite } from '../store/sqlite';
import type { TaskContext } from '../workers/context';
import { hasOpenSocket } from './presence';
import { NotificationStore, type Notification } from './store';
import { DELIVERY_TOPIC, PUSH_TOPIC, type PushMessage } from './topics';

export interface DeliveryResult {
  /** Notifications sent to the HTTP threads. */
  delivered: number;
  /** Push messages handed to the sender. */
  pushed: number;
}

/** The message of a notification, the same on a WebSocket and in a push message. */
export function notificationMessage(n: Notification): string {
  return '{"type":"notification","data":' + JSON.stringify(n) + '}';
}

const stores = new WeakMap<Sqlite, NotificationStore>();
function storeOf(db: Sqlite): NotificationStore {
  let s = stores.get(db);
  if (!s) stores.set(db, (s = new NotificationStore(db)));
  return s;
}

export async function deliveryTask(ctx: TaskContext, range: OutboxRange): Promise<DeliveryResult> {
  const pubsub = ctx.pubsub;
  if (!pubsub) throw new Error('notifications.deliver needs the publish/subscribe port');
  const store = storeOf(ctx.sqlite);
  const events = store.notificationEvents(range.after, range.upTo);
  if (events.length === 0) return { delivered: 0, pushed: 0 };
  // Each notification once, at the place of its last event (the row is read as it stands now).
  const order = new Map<string, number>();
  events.forEach(([, id], i) => order.set(id, i));
  const rows = store.byIds([...order.keys()]);
  rows.sort((a, b) => order.get(a.notification.id)! - order.get(b.notification.id)!);
  const items: Array<[string, string]> = rows.map((r) => [r.recipientId, notificationMessage(r.notification)]);
  if (items.length > 0) pubsub.publish(DELIVERY_TOPIC, { items });

  let pushed = 0;
  if (ctx.config.push.enabled && items.length > 0) {
    const offline = [...new Set(items.map(([recipientId]) => recipientId))].filter((id) => !hasOpenSocket(ctx.hot, id));
    const targets = offline.length > 0 ? store.pushTargets(offline) : [];
    if (targets.length > 0) {
      const texts = new Map<string, string[]>();
      for (const [recipientId, text] of items) {
        const list = texts.get(recipientId);
        if (list) list.push(text);
        else texts.set(recipientId, [text]);
      }
      const push: PushMessage['items'] = [];
      for (const target of targets) for (const text of texts.get(target.user_id) ?? []) push.push({ target, text });
      pubsub.publish(PUSH_TOPIC, { items: push });
      pushed = push.length;
    }
  }
  return { delivered: items.length, pushed };
}
