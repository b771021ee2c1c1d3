// perch's service worker: Web Push only. It shows the notifications that the server pushes while
// no page of this browser has the WebSocket open, and opens the notifications screen when one is
// clicked. It has no fetch handler, so it never stands between the browser and the server (the
// redirects of short links included). Served at /app/sw.js with `Service-Worker-Allowed: /`
// (docs/web.md, "Web Push").
import { excerpt, notificationSentence, type NotificationItem } from '../src/notification-text';

declare const self: ServiceWorkerGlobalScope;

/** How long the worker waits for a handle or a post's text before showing the notification anyway. */
const LOOKUP_MS = 3000;

async function getJson<T>(path: string): Promise<T | null> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LOOKUP_MS);
  try {
    // Users and posts are public: the worker needs no key (it has none).
    const res = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'omit', signal: controller.signal });
    return res.ok ? ((await res.json()) as T) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function show(n: NotificationItem): Promise<void> {
  const actors = n.actor_ids.slice(0, 2);
  const [handles, post] = await Promise.all([
    Promise.all(actors.map((id) => getJson<{ handle: string }>(`/api/users/${encodeURIComponent(id)}`).then((u) => u?.handle ?? null))),
    n.post_id ? getJson<{ text: string }>(`/api/posts/${encodeURIComponent(n.post_id)}`) : Promise.resolve(null),
  ]);
  const sentence = notificationSentence(n, handles);
  await self.registration.showNotification('perch', {
    body: post ? `${sentence}: “${excerpt(post.text)}”` : sentence,
    // One notification per row: an update (a new actor) replaces the one shown before.
    tag: `perch-notification-${n.id}`,
    data: { id: n.id, updated_at: n.updated_at },
  });
}

self.addEventListener('install', () => {
  // Nothing is cached, so a new version may take over at once.
  void self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

interface PushMessage {
  type?: string;
  data?: NotificationItem;
}

function parse(event: PushEvent): PushMessage | null {
  try {
    return event.data ? (event.data.json() as PushMessage) : null;
  } catch {
    return null;
  }
}

self.addEventListener('push', (event) => {
  const message = parse(event);
  if (message?.type === 'notification' && message.data) {
    event.waitUntil(show(message.data));
  } else {
    // A push must show something (userVisibleOnly); say what little is known.
    event.waitUntil(self.registration.showNotification('perch', { body: 'You have a new notification.', tag: 'perch-notification' }));
  }
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(
    (async () => {
      const url = new URL('/#/notifications', self.location.origin).href;
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      for (const w of windows) {
        if (new URL(w.url).origin === self.location.origin) {
          await w.focus();
          await w.navigate(url).catch(() => undefined);
          return;
        }
      }
      await self.clients.openWindow(url);
    })(),
  );
});
