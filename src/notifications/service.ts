// Notifications, their preferences and Web Push subscriptions, independent of HTTP: checked input
// in, domain objects out; routes.ts turns them into replies. Writes go to the writer as named
// operations (writes.ts).
import type { AccountStore } from '../accounts/store';
import type { Config } from '../config';
import { defaultPreferences, type Preferences } from '../core/notifications';
import { checkEndpoint } from '../core/public-address';
import { authSecretProblem, p256dhProblem } from '../core/push-keys';
import { isIdString } from '../core/snowflake';
import { isoNow } from '../core/clock';
import { invalidRequest, notFound, unavailable, type ErrorDetail } from '../http/errors';
import { pageOf, type Page } from '../http/paging';
import type { Writes } from '../writer/operations';
import type { PreferencesInput, SubscriptionInput } from './schema';
import type { NotificationPage, NotificationStore, PushSubscription } from './store';
import type { NotificationWrites } from './writes';

/** Notification ids are positive integers (SQLite row ids); anything else names none. */
const NOTIFICATION_ID = /^[1-9][0-9]{0,15}$/;

export class NotificationService {
  constructor(
    private readonly store: NotificationStore,
    private readonly accounts: AccountStore,
    private readonly writes: Writes<NotificationWrites>,
    private readonly config: Config,
  ) {}

  page(userId: string, cursor: [number, number] | null, limit: number): NotificationPage {
    return this.store.page(userId, cursor, limit);
  }

  unreadCount(userId: string): number {
    return this.store.unreadCount(userId);
  }

  markRead(userId: string, ref: string): Promise<void> {
    if (!NOTIFICATION_ID.test(ref)) throw notFound('No such notification.');
    return this.writes.run('markNotificationRead', { userId, id: ref });
  }

  async markAllRead(userId: string): Promise<void> {
    await this.writes.run('markAllNotificationsRead', { userId });
  }

  /**
   * The stored preferences, less what PUT would refuse back and what does nothing: muted posts
   * deleted since, and one's own id among the priority users (stored before PUT refused it). A
   * client sending back what GET answered must succeed.
   */
  preferences(userId: string): Preferences {
    const stored = this.store.preferences(userId);
    return {
      ...stored,
      muted_post_ids: stored.muted_post_ids.filter((id) => this.store.postExists(id)),
      priority_user_ids: stored.priority_user_ids.filter((id) => id !== userId),
    };
  }

  /**
   * Replaces the preferences. Muted posts must be live posts and priority users existing users
   * other than oneself (an id that names nothing, or oneself, whose actions never notify oneself,
   * is more likely a mistake than an intent); repeated ids count once.
   */
  setPreferences(userId: string, input: PreferencesInput): Promise<Preferences> {
    const defaults = defaultPreferences();
    const details: ErrorDetail[] = [];
    const muted = unique(input.muted_post_ids ?? []);
    const priority = unique(input.priority_user_ids ?? []);
    (input.muted_post_ids ?? []).forEach((id, i) => {
      if (!isIdString(id) || !this.store.postExists(id)) details.push({ path: `muted_post_ids.${i}`, message: 'no such post' });
    });
    (input.priority_user_ids ?? []).forEach((id, i) => {
      if (id === userId) details.push({ path: `priority_user_ids.${i}`, message: 'is your own id; your own actions never notify you' });
      else if (!this.accounts.userById(id)) details.push({ path: `priority_user_ids.${i}`, message: 'no such user' });
    });
    if (details.length > 0) throw invalidRequest(details);
    const preferences: Preferences = {
      muted_post_ids: muted,
      priority_user_ids: priority,
      types: { ...defaults.types, ...stripUndefined(input.types ?? {}) },
    };
    return this.writes.run('setNotificationPreferences', { userId, preferences, now: isoNow() });
  }

  // ---- Web Push ----

  private requirePush(): void {
    if (!this.config.push.enabled) throw notFound('Web Push is turned off on this server.');
  }

  vapidPublicKey(): string {
    this.requirePush();
    const keys = this.store.vapidKeys();
    // Made by the supervisor before the server listens; missing only if that failed.
    if (!keys) throw unavailable(5, 'The push keys are not ready yet.');
    return keys.publicKey;
  }

  /**
   * Adds a subscription (created: true) or finds the caller's one with the same endpoint; either
   * way it goes with the API key that sent it (revoking the key forgets it).
   */
  subscribe(userId: string, keyId: string, input: SubscriptionInput): Promise<{ subscription: PushSubscription; created: boolean }> {
    this.requirePush();
    const details: ErrorDetail[] = [];
    const endpoint = checkEndpoint(input.endpoint, this.config.push.allow_insecure_endpoints);
    if (!endpoint.ok) details.push({ path: 'endpoint', message: endpoint.message });
    const p256dh = p256dhProblem(input.keys.p256dh);
    if (p256dh) details.push({ path: 'keys.p256dh', message: p256dh });
    const auth = authSecretProblem(input.keys.auth);
    if (auth) details.push({ path: 'keys.auth', message: auth });
    if (!endpoint.ok || details.length > 0) throw invalidRequest(details);
    // Stored as the URL parser writes it (scheme and host in lower case, no default port...), so
    // that two spellings of one endpoint are one subscription, as a push service takes them to be.
    return this.writes.run('addPushSubscription', { userId, keyId, endpoint: endpoint.url.href, p256dh: input.keys.p256dh, auth: input.keys.auth, now: isoNow() });
  }

  subscriptions(userId: string, before: bigint, limit: number): Page<PushSubscription> {
    this.requirePush();
    return pageOf(this.store.subscriptionsPage(userId, before, limit + 1), limit, (s) => s, (s) => BigInt(s.id));
  }

  unsubscribe(userId: string, ref: string): Promise<void> {
    this.requirePush();
    if (!NOTIFICATION_ID.test(ref)) throw notFound('No such push subscription.');
    return this.writes.run('deletePushSubscription', { userId, id: ref });
  }
}

function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]-?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]-?: Exclude<T[K], undefined> };
}
