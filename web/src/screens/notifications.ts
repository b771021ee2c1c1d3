// The notifications screen: the list (latest activity first, page by page), marking read one by
// one or all at once, and what arrives live over /ws put on top as it comes.
import { html } from 'htm/preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, withQuery, type NotificationItem, type NotificationPage, type Post, type User } from '../api';
import { ErrorMessage, MoreItems, ScreenTitle, announce, useFeed } from '../components';
import { formatDateTime } from '../format';
import { excerpt, actionText } from '../notification-text';
import { allRead, liveState, markedRead, noteSeen, onNotification, onResync, refreshUnread, unreadCount } from '../notifications';
import { href } from '../router';
import { useStore } from '../store';
import { postById, userById } from '../users';

/** A lookup by id that re-renders when it answers: the value, null (none) or undefined (pending). */
function useLookup<T>(id: string | null | undefined, lookup: (id: string) => Promise<T | null>): T | null | undefined {
  const [value, setValue] = useState<T | null | undefined>(undefined);
  useEffect(() => {
    let current = true;
    setValue(undefined);
    if (!id) {
      setValue(null);
      return;
    }
    lookup(id).then(
      (v) => current && setValue(v),
      () => current && setValue(null),
    );
    return () => {
      current = false;
    };
  }, [id]);
  return value;
}

function Actor({ id }: { id: string }) {
  const user = useLookup<User>(id, userById);
  if (user) return html`<a href=${href('/users/' + user.handle)} class="handle">@${user.handle}</a>`;
  return html`<span>${user === null ? 'a deleted account' : 'someone'}</span>`;
}

/** "@bob", "@bob and @carol", "@bob and 4 others", with links to their profiles. */
function Actors({ n }: { n: NotificationItem }) {
  const [first, second] = n.actor_ids;
  if (!first) return html`<span>Someone</span>`;
  if (n.actor_count <= 1) return html`<${Actor} id=${first} />`;
  if (n.actor_count === 2 && second) return html`<${Actor} id=${first} /> and <${Actor} id=${second} />`;
  const others = n.actor_count - 1;
  return html`<${Actor} id=${first} /> and ${others} other${others === 1 ? '' : 's'}`;
}

function PostQuote({ id }: { id: string }) {
  const post = useLookup<Post>(id, postById);
  if (post === undefined) return html`<span class="muted">…</span>`;
  if (post === null) return html`<span class="muted">(the post was deleted)</span>`;
  return html`<a href=${href('/posts/' + post.id)} class="quote">“${excerpt(post.text)}”</a>`;
}

function NotificationRow({ n, onRead }: { n: NotificationItem; onRead: (n: NotificationItem) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const row = useRef<HTMLLIElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  // A read row has no button: when the focus was on it, the row takes the focus rather than the page.
  const focusRowWhenRead = useRef(false);
  useLayoutEffect(() => {
    if (n.read && focusRowWhenRead.current) {
      focusRowWhenRead.current = false;
      row.current?.setAttribute('tabindex', '-1');
      row.current?.focus();
    }
  }, [n.read]);
  async function read() {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await api.post(`/api/notifications/${encodeURIComponent(n.id)}/read`);
      focusRowWhenRead.current = document.activeElement === button.current;
      onRead(n);
      announce('Marked as read.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<li class=${'notification ' + (n.read ? 'read' : 'unread')} data-id=${n.id} data-type=${n.type} ref=${row}>
    <div class="notification-body">
      <p class="notification-text">
        ${n.read ? null : html`<span class="visually-hidden">Unread: </span>`}
        <span id=${`notification-${n.id}-what`}><${Actors} n=${n} /> ${actionText(n.type)}${n.post_id ? html`: <${PostQuote} id=${n.post_id} />` : '.'}</span>
        ${n.priority ? html` <span class="badge">priority</span>` : null}
      </p>
      <p class="muted small"><time datetime=${n.updated_at}>${formatDateTime(n.updated_at)}</time></p>
      <${ErrorMessage} error=${error} />
    </div>
    ${n.read
      ? null
      : html`<button type="button" class="secondary small" ref=${button} onClick=${read} aria-disabled=${busy ? 'true' : null}
          id=${`notification-${n.id}-read`} aria-labelledby=${`notification-${n.id}-read notification-${n.id}-what`}>Mark as read</button>`}
  </li>`;
}

function LiveStatus() {
  const live = useStore(liveState);
  const [, tick] = useState(0);
  useEffect(() => {
    if (live.state !== 'waiting') return;
    const t = window.setInterval(() => tick((x) => x + 1), 1000);
    return () => window.clearInterval(t);
  }, [live]);
  let text: string;
  switch (live.state) {
    case 'open':
      text = 'Live: new notifications appear here as they happen.';
      break;
    case 'connecting':
      text = 'Connecting for live updates…';
      break;
    case 'waiting':
      text = `Live updates are interrupted; trying again in ${Math.max(1, Math.ceil((live.retryAt - Date.now()) / 1000))} s.`;
      break;
    default:
      text = 'Live updates are off.';
  }
  return html`<p class="muted small live-status" data-state=${live.state}>${text}</p>`;
}

export function Notifications() {
  const unread = useStore(unreadCount);
  const feed = useFeed(async (cursor) => {
    const page = await api.get<NotificationPage>(withQuery('/api/notifications', { limit: 20, cursor }));
    noteSeen(page.items);
    return page;
  }, 'notifications', (n) => n.id);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // The feed as last rendered, for the handlers below, which are made once.
  const current = useRef(feed);
  current.current = feed;

  useEffect(() => {
    // What arrives live goes on top (the list is by latest activity), replacing its older copy.
    // Made again on a first page that arrives after it (useFeed): a copy there at least as new stays.
    const off = onNotification((n) =>
      feed.setItems((items) => (items.some((x) => x.id === n.id && x.updated_at >= n.updated_at) ? items : [n, ...items.filter((x) => x.id !== n.id)])),
    );
    // After a reconnection, read the first page again and put it on top; a list whose last read
    // failed (perch was unreachable meanwhile) is read again whole, which clears its error.
    const offResync = onResync(() => {
      if (current.current.error) return current.current.reload();
      api.get<NotificationPage>(withQuery('/api/notifications', { limit: 20 })).then(
        (page) => {
          noteSeen(page.items);
          // A page that does not reach a row shown as it is (more changed while the socket was
          // closed than a page holds) would leave what lies between it and the rows shown unlisted,
          // and the list's cursor past them: read the list again whole instead.
          const shown = current.current.items;
          const reaches = page.items.some((p) => shown.some((n) => n.id === p.id && n.updated_at === p.updated_at));
          if (page.next_cursor !== null && !reaches) return current.current.reload();
          feed.setItems((items) => mergeNewer(page.items, items));
        },
        () => undefined,
      );
    });
    return () => {
      off();
      offResync();
    };
  }, []);

  function readOne(n: NotificationItem) {
    feed.setItems((items) => items.map((x) => (x.id === n.id ? { ...x, read: true } : x)));
    markedRead();
    void refreshUnread();
  }

  async function readAll() {
    if (busy || unread === 0) return;
    setBusy(true);
    setError(null);
    // The rows shown when it was pressed: a row that arrives later (live, or in a first page on
    // its way) may be newer than what the server marks.
    const marked = new Set(current.current.items.map((x) => x.id));
    try {
      await api.post('/api/notifications/read-all');
      feed.setItems((items) => items.map((x) => (marked.has(x.id) ? { ...x, read: true } : x)));
      allRead();
      announce('All notifications marked as read.');
      void refreshUnread();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<div class="screen">
    <${ScreenTitle}>Notifications</${ScreenTitle}>
    <div class="row">
      <p class="unread-summary">${unread === null ? '' : unread === 0 ? 'Nothing unread.' : `${unread} unread.`}</p>
      <div class="actions">
        <button type="button" class="secondary" onClick=${readAll} aria-disabled=${busy || unread === 0 ? 'true' : null}>Mark all as read</button>
        <a href=${href('/notifications/settings')}>Settings</a>
      </div>
    </div>
    <${LiveStatus} />
    <${ErrorMessage} error=${error} />
    <section aria-labelledby="notifications-list-title">
      <h2 id="notifications-list-title" class="visually-hidden">Your notifications</h2>
      ${feed.items.length === 0 && feed.done && !feed.error
        ? html`<p class="muted">No notifications yet. Likes of your posts, replies to them and new followers show here.</p>`
        : null}
      <ul class="notification-list">
        ${feed.items.map((n) => html`<${NotificationRow} key=${n.id} n=${n} onRead=${readOne} />`)}
      </ul>
      ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label="Load older notifications" endText="That is every notification." />` : null}
    </section>
  </div>`;
}

/**
 * A first page read again (after a reconnection) over the rows shown: the page on top, then the
 * rest; where both have a row, the copy with the later activity (a live message newer than the
 * page keeps its place on top of it).
 */
function mergeNewer(page: NotificationItem[], shown: NotificationItem[]): NotificationItem[] {
  const inPage = new Set(page.map((n) => n.id));
  const newerShown = shown.filter((n) => inPage.has(n.id) && page.some((p) => p.id === n.id && n.updated_at > p.updated_at));
  const newerIds = new Set(newerShown.map((n) => n.id));
  return [...newerShown, ...page.filter((p) => !newerIds.has(p.id)), ...shown.filter((n) => !inPage.has(n.id))];
}
