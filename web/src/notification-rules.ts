// The rules of the live channel that do not depend on a browser, kept apart so that they can be
// tested on their own: which messages are news, and how long to wait before reconnecting.
import type { NotificationItem } from './notification-text';

/**
 * Delivery over /ws is at least once: the same (id, updated_at) may arrive twice. This keeps the
 * newest `updated_at` seen per notification id, from the list as well as the socket; a
 * notification is news only when its `updated_at` is newer. Timestamps are ISO 8601 UTC with
 * milliseconds, all of one length, so they compare as strings.
 */
export class SeenNotifications {
  private readonly latest = new Map<string, string>();

  /** Records notifications read from the list (their copies arriving later are not news). */
  note(items: Pick<NotificationItem, 'id' | 'updated_at'>[]): void {
    for (const n of items) {
      const before = this.latest.get(n.id);
      if (before === undefined || n.updated_at > before) this.latest.set(n.id, n.updated_at);
    }
  }

  /** Whether `n` is news; if it is, it is recorded. */
  isNew(n: Pick<NotificationItem, 'id' | 'updated_at'>): boolean {
    const before = this.latest.get(n.id);
    if (before !== undefined && n.updated_at <= before) return false;
    this.latest.set(n.id, n.updated_at);
    return true;
  }

  clear(): void {
    this.latest.clear();
  }
}

export const RECONNECT_FIRST_MS = 1000;
export const RECONNECT_MAX_MS = 30_000;

/**
 * The wait before reconnection attempt `attempt` (0 first): 1 s, 2 s, 4 s … at most 30 s, of which
 * a random part (`random` in [0, 1)) takes up to half, so that many browsers do not all come back
 * at the same instant after the server restarts.
 */
export function reconnectDelayMs(attempt: number, random: number): number {
  const base = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + (random * base) / 2);
}
