// Notifications while signed in: the unread count (GET /api/me `unread_notifications`), and the
// live channel (GET /ws) that brings every new or changed notification.
//
// - The browser cannot set headers on a WebSocket, so the key goes in `?access_token=`.
// - Reconnecting: after a close, wait 1 s, 2 s, 4 s … up to 30 s, with a random part
//   (notification-rules.ts); a connection that stayed open 10 s starts the series again. Coming
//   back online tries at once.
// - A socket that will not open, or one the server closes as revoked (1008), may mean the key
//   stopped working: GET /api/me tells, and its 401 signs out (api.ts).
// - Delivery is at least once: the same (id, updated_at) may arrive twice (docs/notifications.md).
//   The client keeps the newest `updated_at` it has seen per notification id, from the list as well
//   as the socket, and drops a message whose `updated_at` is not newer (SeenNotifications).
//   Messages are not kept for a closed socket, so after a reconnection the screen reads the first
//   page again (`resync`).
import { api, type User } from './api';
import { SeenNotifications, reconnectDelayMs } from './notification-rules';
import type { NotificationItem } from './notification-text';
import { setMe, thisSession } from './session';
import { createStore } from './store';

export type LiveState =
  | { state: 'off' }
  | { state: 'connecting' }
  | { state: 'open' }
  | { state: 'waiting'; retryAt: number };

/** Unread notifications of the signed-in user; null until known. */
export const unreadCount = createStore<number | null>(null);
export const liveState = createStore<LiveState>({ state: 'off' });

const STABLE_MS = 10_000;

type Listener = (n: NotificationItem) => void;
const listeners = new Set<Listener>();
const resyncListeners = new Set<() => void>();
const seen = new SeenNotifications();

let key: string | null = null;
let socket: WebSocket | null = null;
let attempts = 0;
let retryTimer = 0;
let everOpened = false;

/** Records notifications read from the list, so the socket's copies of them are not new. */
export function noteSeen(items: NotificationItem[]): void {
  seen.note(items);
}

/** Called for every new or changed notification that arrives live (after dedupe). */
export function onNotification(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Called after a reconnection: what came meanwhile was not sent, read the list again. */
export function onResync(listener: () => void): () => void {
  resyncListeners.add(listener);
  return () => resyncListeners.delete(listener);
}

let refreshing: Promise<void> | null = null;
let refreshAgain = false;
/**
 * Changes made to the count here (a notification read, all read): an answer to a read sent before
 * one of them is older than the count shown, and is not shown; the read is made again.
 */
let countedHere = 0;

/** Reads the unread count again (GET /api/me); calls made meanwhile share one more read. */
export function refreshUnread(): Promise<void> {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      try {
        const asked = countedHere;
        // The session the request is signed for (the API signs with the session's key at once).
        const stillThis = thisSession();
        const me = await api.get<User>('/api/me');
        if (!key) return;
        // The session ended meanwhile (another key signed in): this answer is of the one before.
        if (!stillThis()) {
          refreshAgain = true;
          continue;
        }
        setMe(me);
        if (asked !== countedHere) refreshAgain = true;
        else if (typeof me.unread_notifications === 'number') unreadCount.set(me.unread_notifications);
      } catch {
        // A 401 has signed out (api.ts); a network failure leaves the count as it was.
        return;
      }
    } while (refreshAgain);
  })().finally(() => (refreshing = null));
  return refreshing;
}

/** Counts a notification read here without asking the server. */
export function markedRead(count = 1): void {
  countedHere++;
  const n = unreadCount.get();
  if (n !== null) unreadCount.set(Math.max(0, n - count));
}

/** Counts every notification read here (Mark all as read) without asking the server. */
export function allRead(): void {
  countedHere++;
  unreadCount.set(0);
}

function socketUrl(k: string): string {
  const url = new URL('/ws', window.location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('access_token', k);
  return url.href;
}

function receive(data: unknown): void {
  let message: { type?: string; data?: NotificationItem };
  try {
    message = JSON.parse(String(data));
  } catch {
    return;
  }
  const n = message?.data;
  if (message?.type !== 'notification' || !n || typeof n.id !== 'string' || typeof n.updated_at !== 'string') return;
  if (!seen.isNew(n)) return;
  for (const l of [...listeners]) l(n);
  void refreshUnread();
}

function connect(): void {
  if (!key || socket) return;
  liveState.set({ state: 'connecting' });
  let ws: WebSocket;
  try {
    ws = new WebSocket(socketUrl(key));
  } catch {
    scheduleRetry(false);
    return;
  }
  socket = ws;
  let openedAt = 0;
  ws.onopen = () => {
    openedAt = Date.now();
    liveState.set({ state: 'open' });
    // Messages are not kept for a socket that is not open: after a reconnection, or a first open
    // that came only after failed attempts (a list read meanwhile misses what happened since),
    // the lists shown read their first page again.
    if (everOpened || attempts > 0) for (const l of [...resyncListeners]) l();
    everOpened = true;
    void refreshUnread();
  };
  ws.onmessage = (e) => receive(e.data);
  ws.onclose = (e) => {
    if (socket !== ws) return;
    socket = null;
    if (!key) return;
    if (openedAt && Date.now() - openedAt >= STABLE_MS) attempts = 0;
    // Refused, or closed as revoked: find out whether the key still works (a 401 signs out).
    const suspectKey = !openedAt || e.code === 1008;
    scheduleRetry(suspectKey);
  };
}

function scheduleRetry(checkKey: boolean): void {
  if (!key) return;
  const delay = reconnectDelayMs(attempts, Math.random());
  attempts++;
  liveState.set({ state: 'waiting', retryAt: Date.now() + delay });
  window.clearTimeout(retryTimer);
  retryTimer = window.setTimeout(connect, delay);
  if (checkKey) void refreshUnread();
}

function online(): void {
  if (key && !socket) {
    window.clearTimeout(retryTimer);
    connect();
  }
}

/** Starts the count and the live channel for a signed-in key. */
export function startNotifications(k: string): void {
  if (key === k) return;
  stopNotifications();
  key = k;
  attempts = 0;
  everOpened = false;
  window.addEventListener('online', online);
  void refreshUnread();
  connect();
}

/** Signing out: closes the channel and forgets everything. */
export function stopNotifications(): void {
  key = null;
  window.clearTimeout(retryTimer);
  window.removeEventListener('online', online);
  const ws = socket;
  socket = null;
  ws?.close(1000);
  seen.clear();
  unreadCount.set(null);
  liveState.set({ state: 'off' });
}

