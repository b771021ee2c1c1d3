// The rules of notifications, as pure functions: which actions make a notification at all (no
// self-notification, the recipient's preferences), and how an action joins an existing row or
// makes a new one (aggregation). The consumer (notifications/store.ts) reads the rows and the
// preferences, asks these functions, and writes what they decide.

export type NotificationType = 'like' | 'reply' | 'follow';

export const NOTIFICATION_TYPES: readonly NotificationType[] = ['like', 'reply', 'follow'];

/** A user's notification preferences, as the API shows them. */
export interface Preferences {
  muted_post_ids: string[];
  priority_user_ids: string[];
  types: Record<NotificationType, boolean>;
}

export function defaultPreferences(): Preferences {
  return { muted_post_ids: [], priority_user_ids: [], types: { like: true, reply: true, follow: true } };
}

/**
 * actor_ids keeps at most this many actors, newest first; actor_count still counts every distinct
 * actor. A popular post can gather thousands of likes within one window, and rewriting and sending
 * a list that long on each of them would cost more than any client shows.
 */
export const MAX_ACTOR_IDS = 100;

/** An action that may notify someone: a like, a reply or a follow. */
export interface Action {
  type: NotificationType;
  actorId: string;
  recipientId: string;
  /** The post concerned (a reply's parent); null for a follow. */
  postId: string | null;
}

export type Suppression = 'self' | 'type_disabled' | 'muted' | null;

/**
 * Why an action makes no notification, or null when it makes one. `thread` is the post concerned
 * followed by its ancestors (the post it replies to, and so on up): muting a post mutes its whole
 * thread below it, so an action on a reply to a muted post is muted too.
 */
export function suppression(action: Action, prefs: Preferences, thread: readonly string[]): Suppression {
  if (action.actorId === action.recipientId) return 'self';
  if (!prefs.types[action.type]) return 'type_disabled';
  if (prefs.muted_post_ids.length > 0) {
    for (const postId of thread) if (prefs.muted_post_ids.includes(postId)) return 'muted';
  }
  return null;
}

/** The newest non-priority row with the action's key (recipient, type, post), as aggregation sees it. */
export interface GroupRow {
  createdAtMs: number;
  /** Whether the action's actor is already one of the row's actors. */
  hasActor: boolean;
}

export type Decision =
  /** A new row (outside the window, no row yet, or a priority actor). */
  | { kind: 'create'; priority: boolean }
  /** The actor joins the row: actor_ids gains it in front, actor_count + 1, updated_at moves, unread again. */
  | { kind: 'join' }
  /** The actor is already in the row and acted again: it moves to the front, updated_at moves, unread again. */
  | { kind: 'refresh' };

/**
 * What an action does to the recipient's notifications, whatever its type. Within `windowMs` of
 * the row's creation an action with the same key joins the newest such row; otherwise (or with no
 * row) it makes a new one. A priority actor's actions are never aggregated: each makes a row of
 * its own, marked priority. An actor already in the row who acts again (a second reply, a like
 * after an unlike, a follow after an unfollow) is a new action with the same key too: it refreshes
 * the row without counting the actor twice (CONTRACT.md, "Aggregation").
 */
export function decide(actorIsPriority: boolean, group: GroupRow | null, atMs: number, windowMs: number): Decision {
  if (actorIsPriority) return { kind: 'create', priority: true };
  if (!group || atMs - group.createdAtMs >= windowMs) return { kind: 'create', priority: false };
  return group.hasActor ? { kind: 'refresh' } : { kind: 'join' };
}

/** actor_ids with `actorId` in front: newest first, no duplicates, at most `max`. */
export function withActor(actorIds: readonly string[], actorId: string, max = MAX_ACTOR_IDS): string[] {
  const out = [actorId];
  for (const id of actorIds) {
    if (out.length >= max) break;
    if (id !== actorId) out.push(id);
  }
  return out;
}

/**
 * The time a change is stamped with: the action's own time, but never before the recipient's
 * latest stamp. Lists are ordered by the order changes were made, and actions made on different
 * threads reach the consumer a few milliseconds out of time order; stamping them this way keeps
 * updated_at in that order, so that "newest first" means the same by either.
 */
export function stampOf(actionAtMs: number, latestMs: number | null): number {
  return latestMs !== null && latestMs > actionAtMs ? latestMs : actionAtMs;
}
