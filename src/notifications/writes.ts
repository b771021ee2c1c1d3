// The durable writes of notifications and Web Push, as named operations the writer runs inside its
// group transactions: the generation (generate.ts), read state, preferences and push
// subscriptions.
import type { Sqlite } from '../store/sqlite';
import { AccountStore } from '../accounts/store';
import { notFound, unauthorized } from '../http/errors';
import type { Preferences } from '../core/notifications';
import { generateNotifications, type GenerateArgs, type GenerateResult } from './generate';
import { NotificationStore, type PushSubscription } from './store';

export function notificationWrites(db: Sqlite) {
  const store = new NotificationStore(db);
  const accounts = new AccountStore(db);
  return {
    /** Makes, joins and removes notifications from the next events of the outbox. */
    generateNotifications(a: GenerateArgs): GenerateResult {
      return generateNotifications(store, a);
    },

    markNotificationRead(a: { userId: string; id: string }): void {
      if (!store.markRead(a.userId, a.id)) throw notFound('No such notification.');
    },

    markAllNotificationsRead(a: { userId: string }): number {
      return store.markAllRead(a.userId);
    },

    setNotificationPreferences(a: { userId: string; preferences: Preferences; now: string }): Preferences {
      store.setPreferences(a.userId, a.preferences, a.now);
      return store.preferences(a.userId);
    },

    addPushSubscription(a: { userId: string; keyId: string; endpoint: string; p256dh: string; auth: string; now: string }): { subscription: PushSubscription; created: boolean } {
      // The server authenticated the key from its cache, which hears of a revocation a moment
      // after it is committed; `perch keys revoke` forgets the key's subscriptions once it has
      // committed. Checked here, in the same serialised transactions, no subscription of a revoked
      // key can slip in between. Its own sentence, not the router's "unknown or revoked": the key
      // was known when the request was let in, and the answer tells the two refusals apart.
      if (!accounts.keyIsLive(a.keyId)) throw unauthorized('The API key has been revoked.');
      return store.addSubscription(a.userId, a.keyId, a.endpoint, a.p256dh, a.auth, a.now);
    },

    deletePushSubscription(a: { userId: string; id: string }): void {
      if (!store.deleteSubscription(a.userId, a.id)) throw notFound('No such push subscription.');
    },

    /** Subscriptions a push service answered 404 or 410 for; returns how many were deleted. */
    deleteGonePushSubscriptions(a: { items: Array<{ id: string; endpoint: string }> }): number {
      let n = 0;
      for (const item of a.items) if (store.deleteGoneSubscription(item.id, item.endpoint)) n++;
      return n;
    },
  };
}

export type NotificationWrites = ReturnType<typeof notificationWrites>;
