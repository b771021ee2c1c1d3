// Persistence of notifications, their preferences, Web Push subscriptions and the VAPID key pair,
// all in SQLite (migrations.ts), and the notifications' reads of the outbox. Post ids are INTEGER
// columns bound as bigint and read back as text.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import { outboxOf, positionSql, type EventRow, type OutboxStore } from '../outbox/store';
import { defaultPreferences, type NotificationType, type Preferences } from '../core/notifications';

/** The generating consumer's position in the outbox (a write operation of the writer: generate.ts). */
export const GENERATION_POSITION = 'notifications';
/** The delivering consumer's position (a pool task: delivery.ts). */
export const DELIVERY_CONSUMER = 'notification_delivery';
/** The events notifications are made from, and the one that removes them. */
export const ACTION_EVENTS = ['like', 'reply', 'follow', 'post_deleted'] as const;
/** The event the generation appends for each notification it made or changed. */
export const NOTIFICATION_EVENT = 'notification';

/** A notification as the API shows it (the recipient is not part of it). */
export interface Notification {
  id: string;
  type: NotificationType;
  actor_ids: string[];
  actor_count: number;
  post_id: string | null;
  read: boolean;
  created_at: string;
  updated_at: string;
  priority: boolean;
}

interface NotificationRow {
  id: string;
  recipient_id: string;
  type: NotificationType;
  post_id: string | null;
  actor_ids: string;
  actor_count: number;
  priority: number;
  read: number;
  created_at: string;
  updated_at: string;
  seq: number;
}

/** A row as a page lists it: `pos` is where it stood when the list's first page was read. */
type PagedRow = NotificationRow & { pos: number };

/** The newest non-priority row of a key, as the generation reads it. */
export interface GroupRowData {
  id: string;
  created_at: string;
  actor_ids: string;
  seq: number;
}

export interface PushSubscription {
  id: string;
  endpoint: string;
  created_at: string;
}

/** What the push sender needs of a subscription. */
export interface PushTarget {
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** A page of a recipient's notifications and where the next one starts (null on the last). */
export interface NotificationPage {
  items: Notification[];
  /** [H, P]: the newest change when the first page was read, and the last item's place then. */
  next: [number, number] | null;
}

const COLUMNS =
  'CAST(n.id AS TEXT) AS id, n.recipient_id, n.type, CAST(n.post_id AS TEXT) AS post_id, n.actor_ids, n.actor_count, n.priority, n.read, n.created_at, n.updated_at, n.seq';
const VAPID_PUBLIC = 'vapid_public_key';
const VAPID_PRIVATE = 'vapid_private_key';
/** How far up a thread the mute check looks: deeper replies are treated as their ancestor's. */
const MAX_THREAD_DEPTH = 64;

export function notificationOf(row: NotificationRow): Notification {
  return {
    id: row.id,
    type: row.type,
    actor_ids: JSON.parse(row.actor_ids) as string[],
    actor_count: row.actor_count,
    post_id: row.post_id,
    read: row.read === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    priority: row.priority === 1,
  };
}

export class NotificationStore {
  private readonly s: Record<string, Statement>;
  private readonly outbox: OutboxStore;
  private readonly firstPage;
  private readonly laterPage;

  constructor(readonly db: Sqlite) {
    this.outbox = outboxOf(db);
    const q = (sql: string) => db.prepare(sql);
    const actionTypes = ACTION_EVENTS.map((t) => `'${t}'`).join(', ');
    this.s = {
      counter: q('SELECT seq FROM notification_counter WHERE id = 1').pluck(),
      setCounter: q('UPDATE notification_counter SET seq = ? WHERE id = 1'),
      actions: q(`SELECT seq, type, actor_id, recipient_id, post_id, payload, created_at FROM events WHERE seq > ? AND type IN (${actionTypes}) ORDER BY seq LIMIT ?`),
      pendingActions: q(`SELECT EXISTS (SELECT 1 FROM events WHERE seq > MAX(?, ${positionSql(GENERATION_POSITION)}) AND type IN (${actionTypes}))`).pluck(),
      preferences: q('SELECT muted_post_ids, priority_user_ids, types FROM notification_preferences WHERE user_id = ?'),
      setPreferences: q(
        `INSERT INTO notification_preferences (user_id, muted_post_ids, priority_user_ids, types, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(user_id) DO UPDATE SET muted_post_ids = excluded.muted_post_ids, priority_user_ids = excluded.priority_user_ids,
           types = excluded.types, updated_at = excluded.updated_at`,
      ),
      parentOf: q('SELECT CAST(reply_to AS TEXT) FROM posts WHERE id = ?').pluck(),
      postExists: q('SELECT EXISTS (SELECT 1 FROM posts WHERE id = ? AND deleted_at IS NULL)').pluck(),
      group: q(
        `SELECT CAST(id AS TEXT) AS id, created_at, actor_ids, seq FROM notifications
         WHERE recipient_id = ? AND type = ? AND post_id IS ? AND priority = 0 ORDER BY created_at DESC LIMIT 1`,
      ),
      hasActor: q('SELECT EXISTS (SELECT 1 FROM notification_actors WHERE notification_id = ? AND actor_id = ?)').pluck(),
      latestStamp: q('SELECT updated_at FROM notifications WHERE recipient_id = ? ORDER BY seq DESC LIMIT 1').pluck(),
      insert: q(
        `INSERT INTO notifications (recipient_id, type, post_id, actor_ids, actor_count, priority, read, created_at, updated_at, seq)
         VALUES (?, ?, ?, ?, 1, ?, 0, ?, ?, ?)`,
      ),
      addActor: q('INSERT OR IGNORE INTO notification_actors (notification_id, actor_id) VALUES (?, ?)'),
      join: q('UPDATE notifications SET actor_ids = ?, actor_count = actor_count + ?, updated_at = ?, read = 0, seq = ? WHERE id = ?'),
      move: q('INSERT INTO notification_moves (seq, notification_id, recipient_id, from_seq, at) VALUES (?, ?, ?, ?, ?)'),
      deleteActorsOfPost: q('DELETE FROM notification_actors WHERE notification_id IN (SELECT id FROM notifications WHERE post_id = ?)'),
      deleteMovesOfPost: q('DELETE FROM notification_moves WHERE notification_id IN (SELECT id FROM notifications WHERE post_id = ?)'),
      deleteOfPost: q('DELETE FROM notifications WHERE post_id = ?'),
      // The oldest `limit` moves, up to the last of them made before the cutoff (moves are numbered
      // in the order they are made, so this is the prefix older than the cutoff).
      pruneMoves: q('DELETE FROM notification_moves WHERE seq <= (SELECT MAX(seq) FROM (SELECT seq, at FROM notification_moves ORDER BY seq LIMIT ?) WHERE at < ?)'),
      markRead: q('UPDATE notifications SET read = 1 WHERE id = ? AND recipient_id = ?'),
      exists: q('SELECT EXISTS (SELECT 1 FROM notifications WHERE id = ? AND recipient_id = ?)').pluck(),
      markAllRead: q('UPDATE notifications SET read = 1 WHERE recipient_id = ? AND read = 0'),
      unread: q('SELECT COUNT(*) FROM notifications WHERE recipient_id = ? AND read = 0').pluck(),
      byIds: q(`SELECT ${COLUMNS} FROM notifications n WHERE n.id IN (SELECT value FROM json_each(?))`),
      notificationEvents: q(`SELECT recipient_id, payload FROM events WHERE seq > ? AND seq <= ? AND type = '${NOTIFICATION_EVENT}' ORDER BY seq`).raw(),
      counts: q('SELECT (SELECT COUNT(*) FROM notifications) AS notifications, (SELECT COUNT(*) FROM push_subscriptions) AS push_subscriptions'),
      subscriptionByEndpoint: q('SELECT CAST(id AS TEXT) AS id, user_id, endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE endpoint = ?'),
      insertSubscription: q('INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, created_at, key_id) VALUES (?, ?, ?, ?, ?, ?)'),
      updateSubscriptionKeys: q('UPDATE push_subscriptions SET p256dh = ?, auth = ?, key_id = ? WHERE id = ?'),
      deleteKeySubscriptions: q('DELETE FROM push_subscriptions WHERE key_id = ? OR (user_id = ? AND key_id IS NULL)'),
      deleteSubscription: q('DELETE FROM push_subscriptions WHERE id = ? AND user_id = ?'),
      deleteGoneSubscription: q('DELETE FROM push_subscriptions WHERE id = ? AND endpoint = ?'),
      deleteSubscriptionById: q('DELETE FROM push_subscriptions WHERE id = ?'),
      // Ordered by the column, not by the text alias of the same name (which would put 9 above 10).
      subscriptionsPage: q('SELECT CAST(s.id AS TEXT) AS id, s.endpoint, s.created_at FROM push_subscriptions s WHERE s.user_id = ? AND s.id < ? ORDER BY s.id DESC LIMIT ?'),
      pushTargets: q(
        'SELECT CAST(s.id AS TEXT) AS id, s.user_id, s.endpoint, s.p256dh, s.auth FROM push_subscriptions s WHERE s.user_id IN (SELECT value FROM json_each(?)) ORDER BY s.id',
      ),
      secret: q('SELECT value FROM server_secrets WHERE name = ?').pluck(),
      addSecret: q('INSERT OR IGNORE INTO server_secrets (name, value) VALUES (?, ?)'),
    };
    this.firstPage = q(`SELECT ${COLUMNS}, n.seq AS pos FROM notifications n WHERE n.recipient_id = ? ORDER BY n.seq DESC LIMIT ?`);
    // Rows that have not changed since the first page, below the cursor's place...
    const unchanged = q(`SELECT ${COLUMNS}, n.seq AS pos FROM notifications n WHERE n.recipient_id = ? AND n.seq < ? ORDER BY n.seq DESC LIMIT ?`);
    // ...and rows that changed since, at the place they had then (their first move after it):
    // only that move can start at or below H, and P <= H.
    const moved = q(
      `SELECT ${COLUMNS}, m.from_seq AS pos FROM notification_moves m JOIN notifications n ON n.id = m.notification_id
       WHERE m.recipient_id = ? AND m.seq > ? AND m.from_seq < ? ORDER BY m.from_seq DESC LIMIT ?`,
    );
    this.laterPage = { unchanged, moved };
  }

  // ---- The generation (the writer's connection) ----

  /** The last activity number handed out. */
  counter(): number {
    return this.s.counter.get() as number;
  }

  setCounter(seq: number): void {
    this.s.setCounter.run(seq);
  }

  /** The first `limit` events after `after` that make or remove notifications, in order. */
  actions(after: number, limit: number): EventRow[] {
    return this.s.actions.all(after, limit) as EventRow[];
  }

  /** Whether events wait for the generation (after `checked`, when the ones before were looked at already). */
  hasPendingActions(checked = 0): boolean {
    return this.s.pendingActions.get(checked) === 1;
  }

  /** Events waiting for the generation, and the age in seconds of the oldest. */
  actionLag(now = Date.now()): { events: number; seconds: number } {
    return this.outbox.lag(GENERATION_POSITION, now, ACTION_EVENTS);
  }

  generationPosition(): number {
    return this.outbox.position(GENERATION_POSITION);
  }

  /** The newest event's number. */
  newestEvent(): number {
    return this.outbox.newest();
  }

  setGenerationPosition(seq: number, now: string): void {
    this.outbox.setPosition(GENERATION_POSITION, seq, now);
  }

  /** A post and its ancestors, nearest first (at most MAX_THREAD_DEPTH). */
  thread(postId: string): string[] {
    const out = [postId];
    let current: string | null = postId;
    while (out.length < MAX_THREAD_DEPTH) {
      current = (this.s.parentOf.get(BigInt(current)) as string | null | undefined) ?? null;
      if (current === null) break;
      out.push(current);
    }
    return out;
  }

  group(recipientId: string, type: NotificationType, postId: string | null): GroupRowData | undefined {
    return this.s.group.get(recipientId, type, postId === null ? null : BigInt(postId)) as GroupRowData | undefined;
  }

  hasActor(notificationId: string, actorId: string): boolean {
    return this.s.hasActor.get(BigInt(notificationId), actorId) === 1;
  }

  /** The updated_at of the recipient's latest change, if any. */
  latestStamp(recipientId: string): string | undefined {
    return this.s.latestStamp.get(recipientId) as string | undefined;
  }

  /** A new row with one actor; returns its id. */
  insert(recipientId: string, type: NotificationType, postId: string | null, actorId: string, priority: boolean, at: string, seq: number): string {
    const id = this.s.insert.run(recipientId, type, postId === null ? null : BigInt(postId), JSON.stringify([actorId]), priority ? 1 : 0, at, at, seq).lastInsertRowid;
    this.s.addActor.run(id, actorId);
    return String(id);
  }

  /**
   * An actor acts on an existing row: its actor list, count (`added` is 1 for a new actor), stamp
   * and place change, it is unread again, and the move is recorded for cursors.
   */
  change(row: GroupRowData, recipientId: string, actorIds: string[], actorId: string, added: 0 | 1, at: string, seq: number, now: string): void {
    const id = BigInt(row.id);
    if (added) this.s.addActor.run(id, actorId);
    this.s.join.run(JSON.stringify(actorIds), added, at, seq, id);
    this.s.move.run(seq, id, recipientId, row.seq, now);
  }

  /** Removes every notification about a post; returns how many. */
  deleteOfPost(postId: string): number {
    const id = BigInt(postId);
    this.s.deleteActorsOfPost.run(id);
    this.s.deleteMovesOfPost.run(id);
    return this.s.deleteOfPost.run(id).changes;
  }

  /** Deletes up to `limit` of the oldest moves made before `before`. */
  pruneMoves(before: string, limit: number): number {
    return this.s.pruneMoves.run(limit, before).changes;
  }

  /** Appends the event that has a notification delivered. */
  notificationChanged(recipientId: string, id: string, now: string): void {
    this.outbox.append({ type: NOTIFICATION_EVENT, actorId: null, recipientId, postId: null, payload: `{"id":"${id}"}`, createdAt: now });
  }

  // ---- Preferences ----

  preferences(userId: string): Preferences {
    const row = this.s.preferences.get(userId) as { muted_post_ids: string; priority_user_ids: string; types: string } | undefined;
    if (!row) return defaultPreferences();
    return {
      muted_post_ids: JSON.parse(row.muted_post_ids) as string[],
      priority_user_ids: JSON.parse(row.priority_user_ids) as string[],
      types: { ...defaultPreferences().types, ...(JSON.parse(row.types) as Partial<Preferences['types']>) },
    };
  }

  setPreferences(userId: string, p: Preferences, now: string): void {
    this.s.setPreferences.run(userId, JSON.stringify(p.muted_post_ids), JSON.stringify(p.priority_user_ids), JSON.stringify(p.types), now);
  }

  /** Whether a live post has this id. */
  postExists(postId: string): boolean {
    return this.s.postExists.get(BigInt(postId)) === 1;
  }

  // ---- Reads and read state ----

  /**
   * A page of a recipient's notifications, latest activity first. Without a cursor: the newest
   * rows, and H, the last activity number at that moment. With one ([H, P]): the rows that were
   * below P at H, in the order they had then, whether they moved since or not (notification_moves
   * tells where a moved row was); rows made after H are not in it (they are above the first page).
   */
  page(recipientId: string, cursor: [number, number] | null, limit: number): NotificationPage {
    return this.db.transaction(() => {
      let rows: PagedRow[];
      let h: number;
      if (cursor === null) {
        h = this.counter();
        rows = this.firstPage.all(recipientId, limit + 1) as PagedRow[];
      } else {
        const [high, below] = cursor;
        h = high;
        const unchanged = this.laterPage.unchanged.all(recipientId, below, limit + 1) as PagedRow[];
        const moved = this.laterPage.moved.all(recipientId, high, below, limit + 1) as PagedRow[];
        rows = moved.length === 0 ? unchanged : [...unchanged, ...moved].sort((a, b) => b.pos - a.pos).slice(0, limit + 1);
      }
      const more = rows.length > limit;
      const kept = more ? rows.slice(0, limit) : rows;
      const next: [number, number] | null = more ? [h, kept[kept.length - 1].pos] : null;
      return { items: kept.map(notificationOf), next };
    })();
  }

  unreadCount(recipientId: string): number {
    return this.s.unread.get(recipientId) as number;
  }

  /** Marks one of the recipient's notifications read; false when they have no such notification. */
  markRead(recipientId: string, id: string): boolean {
    const n = BigInt(id);
    if (this.s.markRead.run(n, recipientId).changes === 1) return true;
    return this.s.exists.get(n, recipientId) === 1;
  }

  markAllRead(recipientId: string): number {
    return this.s.markAllRead.run(recipientId).changes;
  }

  // ---- Delivery (pool threads) ----

  /** The notifications the `notification` events in (after, upTo] name: recipient and id, in order. */
  notificationEvents(after: number, upTo: number): Array<[recipientId: string, id: string]> {
    const rows = this.s.notificationEvents.all(after, upTo) as Array<[string, string]>;
    return rows.map(([recipient, payload]) => [recipient, (JSON.parse(payload) as { id: string }).id]);
  }

  /** The current rows of these notifications (deleted ones are missing), with their recipients. */
  byIds(ids: readonly string[]): Array<{ recipientId: string; notification: Notification }> {
    const rows = this.s.byIds.all(JSON.stringify(ids.map(Number))) as NotificationRow[];
    return rows.map((r) => ({ recipientId: r.recipient_id, notification: notificationOf(r) }));
  }

  /** Every push subscription of these users. */
  pushTargets(userIds: readonly string[]): PushTarget[] {
    return this.s.pushTargets.all(JSON.stringify(userIds)) as PushTarget[];
  }

  // ---- Push subscriptions ----

  /** The user's subscriptions with ids below `before`, newest first. */
  subscriptionsPage(userId: string, before: bigint, limit: number): PushSubscription[] {
    return this.s.subscriptionsPage.all(userId, before, limit) as PushSubscription[];
  }

  /**
   * Adds a subscription, or finds the one with the same endpoint. An endpoint belongs to one
   * browser profile: when another user registers it, it moves to them (a browser now signed in
   * as someone else must not receive the previous user's notifications).
   */
  addSubscription(userId: string, keyId: string, endpoint: string, p256dh: string, auth: string, now: string): { subscription: PushSubscription; created: boolean } {
    const existing = this.s.subscriptionByEndpoint.get(endpoint) as (PushTarget & { created_at: string }) | undefined;
    if (existing && existing.user_id === userId) {
      // Registered again (a renewal at the next visit): it now goes with the key that sent it.
      this.s.updateSubscriptionKeys.run(p256dh, auth, keyId, BigInt(existing.id));
      return { subscription: { id: existing.id, endpoint, created_at: existing.created_at }, created: false };
    }
    if (existing) this.s.deleteSubscriptionById.run(BigInt(existing.id));
    const id = this.s.insertSubscription.run(userId, endpoint, p256dh, auth, now, keyId).lastInsertRowid;
    return { subscription: { id: String(id), endpoint, created_at: now }, created: true };
  }

  /**
   * Forgets the subscriptions an API key (revoked) may have registered: those recorded with it,
   * and its user's that were registered before subscriptions recorded their key (migration 11),
   * one of which may be the key's. Returns how many.
   */
  deleteKeySubscriptions(keyId: string, userId: string): number {
    return this.s.deleteKeySubscriptions.run(keyId, userId).changes;
  }

  deleteSubscription(userId: string, id: string): boolean {
    return this.s.deleteSubscription.run(BigInt(id), userId).changes === 1;
  }

  /** Deletes subscriptions a push service said are gone (only if the endpoint is still theirs). */
  deleteGoneSubscription(id: string, endpoint: string): boolean {
    return this.s.deleteGoneSubscription.run(BigInt(id), endpoint).changes === 1;
  }

  // ---- VAPID keys (server_secrets) ----

  /** The VAPID key pair (base64url: the uncompressed P-256 point, and the private scalar). */
  vapidKeys(): { publicKey: string; privateKey: string } | null {
    const pub = this.s.secret.get(VAPID_PUBLIC) as Buffer | undefined;
    const priv = this.s.secret.get(VAPID_PRIVATE) as Buffer | undefined;
    if (!pub || !priv) return null;
    return { publicKey: pub.toString('base64url'), privateKey: priv.toString('base64url') };
  }

  /** Stores a key pair unless one is stored already; returns the stored one. */
  ensureVapidKeys(publicKey: string, privateKey: string): { publicKey: string; privateKey: string } {
    if (!this.vapidKeys()) {
      this.s.addSecret.run(VAPID_PUBLIC, Buffer.from(publicKey, 'base64url'));
      this.s.addSecret.run(VAPID_PRIVATE, Buffer.from(privateKey, 'base64url'));
    }
    return this.vapidKeys()!;
  }

  counts(): { notifications: number; push_subscriptions: number } {
    return this.s.counts.get() as { notifications: number; push_subscriptions: number };
  }
}
