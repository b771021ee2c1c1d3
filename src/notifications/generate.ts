// The generation of notifications from the outbox: a write operation the writer runs (writes.ts),
// so that reading the events and the preferences, writing the rows, the event that has each one
// delivered, and the consumer's position all happen in one transaction. Each event is therefore
// applied exactly once, which aggregation needs: applying a like twice would mark a row unread
// again, or make a second row once the window has passed. docs/notifications.md says why it is
// not a pool task.
import { decide, stampOf, suppression, withActor, type Action, type NotificationType, type Preferences } from '../core/notifications';
import type { NotificationStore } from './store';

export interface GenerateArgs {
  /** Like, reply, follow and deletion events read per run at most (a run is one transaction of the writer's). */
  limit: number;
  windowMs: number;
  now: string;
}

export interface GenerateResult {
  /** The position after the run, and whether events were left for another. */
  upTo: number;
  more: boolean;
  /** Notifications made or changed. */
  changed: number;
}

/** Moves are kept this long: a list's cursor keeps its order at least as long (store.ts, page). */
export const MOVES_RETENTION_MS = 24 * 60 * 60 * 1000;
const PRUNE_MOVES = 500;

function isNotificationType(type: string): type is NotificationType {
  return type === 'like' || type === 'reply' || type === 'follow';
}

export function generateNotifications(store: NotificationStore, a: GenerateArgs): GenerateResult {
  const after = store.generationPosition();
  const newest = store.newestEvent();
  if (newest <= after) return { upTo: after, more: false, changed: 0 };
  const events = store.actions(after, a.limit);
  // A full run stops at its last event; otherwise it has seen every event there is (other types
  // included), and the position moves past them all.
  const more = events.length === a.limit;
  const upTo = more ? events[events.length - 1].seq : newest;
  let seq = store.counter();
  const prefs = new Map<string, Preferences>();
  const latest = new Map<string, number | null>();
  /** Rows made or changed in this run, and their recipients: one delivery each. */
  const changed = new Map<string, string>();

  for (const e of events) {
    if (e.type === 'post_deleted') {
      if (e.post_id !== null) store.deleteOfPost(e.post_id);
      continue;
    }
    if (!isNotificationType(e.type) || e.actor_id === null || e.recipient_id === null) continue;
    const action: Action = { type: e.type, actorId: e.actor_id, recipientId: e.recipient_id, postId: e.type === 'follow' ? null : e.post_id };
    let p = prefs.get(action.recipientId);
    if (!p) prefs.set(action.recipientId, (p = store.preferences(action.recipientId)));
    const thread = p.muted_post_ids.length > 0 && action.postId !== null ? store.thread(action.postId) : [];
    if (suppression(action, p, thread) !== null) continue;

    const atMs = Date.parse(e.created_at);
    const isPriority = p.priority_user_ids.includes(action.actorId);
    const groupRow = isPriority ? undefined : store.group(action.recipientId, action.type, action.postId);
    const decision = decide(
      isPriority,
      groupRow ? { createdAtMs: Date.parse(groupRow.created_at), hasActor: store.hasActor(groupRow.id, action.actorId) } : null,
      atMs,
      a.windowMs,
    );

    let last = latest.get(action.recipientId);
    if (last === undefined) {
      const stamp = store.latestStamp(action.recipientId);
      last = stamp === undefined ? null : Date.parse(stamp);
    }
    const stampMs = stampOf(atMs, last);
    latest.set(action.recipientId, stampMs);
    const stamp = new Date(stampMs).toISOString();
    seq++;
    if (decision.kind === 'create') {
      const id = store.insert(action.recipientId, action.type, action.postId, action.actorId, decision.priority, stamp, seq);
      changed.set(id, action.recipientId);
    } else {
      const row = groupRow!;
      const actorIds = withActor(JSON.parse(row.actor_ids) as string[], action.actorId);
      store.change(row, action.recipientId, actorIds, action.actorId, decision.kind === 'join' ? 1 : 0, stamp, seq, a.now);
      changed.set(row.id, action.recipientId);
    }
  }

  store.setCounter(seq);
  for (const [id, recipientId] of changed) store.notificationChanged(recipientId, id, a.now);
  store.setGenerationPosition(upTo, a.now);
  store.pruneMoves(new Date(Date.parse(a.now) - MOVES_RETENTION_MS).toISOString(), PRUNE_MOVES);
  return { upTo, more, changed: changed.size };
}
