// Pieces the screens share: error text, the polite announcer, endless lists, posts, a confirm dialog.
import { html } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, describeError, formErrorText, retryable, type FormFields, type Page, type Post } from './api';
import { formatDateTime, plural } from './format';
import { isLiked, rememberLike } from './likes';
import { excerpt } from './notification-text';
import { href } from './router';
import { session, thisSession } from './session';
import { createStore, useStore } from './store';
import { textParts } from './post-links';
import { onNotification } from './notifications';

/** The text of the page's polite live region: outcomes of actions, for screen readers. */
export const announcement = createStore('');

let pendingAnnouncement: ReturnType<typeof setTimeout> | undefined;

/** Says `text` in the live region; of two sentences announced at once, the later is the one said. */
export function announce(text: string): void {
  // Clearing first makes the same sentence twice in a row be read twice.
  announcement.set('');
  clearTimeout(pendingAnnouncement);
  pendingAnnouncement = setTimeout(() => announcement.set(text), 50);
}

export function LiveRegion() {
  const text = useStore(announcement);
  return html`<div class="visually-hidden" aria-live="polite" aria-atomic="true">${text}</div>`;
}

/**
 * A failure as a sentence, announced at once (role=alert). Under a form whose fields show their
 * own errors (`fields`), it names those fields rather than repeating what they say.
 */
export function ErrorMessage({ error, id, fields }: { error: unknown; id?: string; fields?: FormFields }) {
  if (!error) return null;
  return html`<p class="error" role="alert" id=${id}>${fields ? formErrorText(error, fields) : describeError(error)}</p>`;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return html`<p class="muted" role="status">${label}</p>`;
}

/** A screen's heading: focused when the screen changes, so screen readers start there. */
export function ScreenTitle({ children }: { children: unknown }) {
  return html`<h1 tabindex="-1" class="screen-title">${children}</h1>`;
}

export interface Feed<T> {
  items: T[];
  next: string | null;
  /** No page asked yet, or the first one is on its way. */
  loading: boolean;
  error: unknown;
  done: boolean;
  loadMore(): void;
  reload(): void;
  /** Asks again for the page that failed. */
  retry(): void;
  /**
   * Changes the list shown (an item made, changed or removed here). A change made while a first
   * page is on its way is made again on that page when it arrives, so `update` must give the same
   * list when its change is already there (an item added is added once, by id).
   */
  setItems(update: (items: T[]) => T[]): void;
}

/**
 * A list read page by page through `next_cursor`. `load` is called with the cursor (null for the
 * first page); changing `key` starts over. With `idOf`, a later page leaves out the items the list
 * shows already.
 */
export function useFeed<T>(load: (cursor: string | null) => Promise<Page<T>>, key: string, idOf?: (item: T) => string): Feed<T> {
  const [items, setItemsState] = useState<T[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const generation = useRef(0);
  const busy = useRef(false);
  /** The cursor of the page asked last (null: the first), for a retry. */
  const lastAsked = useRef<string | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const idOfRef = useRef(idOf);
  idOfRef.current = idOf;
  // The changes made to the list (setItems) since the first page now on its way was asked for. That
  // page replaces the list, and the server may have made it before a change it does not hold (a
  // link shortened, a notification received meanwhile): they are made again on it.
  const madeMeanwhile = useRef<Array<(items: T[]) => T[]> | null>(null);

  const fetchPage = useCallback((cursor: string | null, replace: boolean) => {
    if (busy.current && !replace) return;
    busy.current = true;
    lastAsked.current = cursor;
    const mine = ++generation.current;
    if (replace) madeMeanwhile.current = [];
    setLoading(true);
    setError(null);
    loadRef.current(cursor).then(
      (page) => {
        if (mine !== generation.current) return;
        busy.current = false;
        if (replace) {
          const changes = madeMeanwhile.current ?? [];
          madeMeanwhile.current = null;
          setItemsState(changes.reduce((items, change) => change(items), page.items));
        } else {
          // A row that moved up since its page was read (a notification with a new actor) may come
          // again in a later page, at its old place: the copy shown stays.
          setItemsState((old) => {
            if (!idOfRef.current) return [...old, ...page.items];
            const idOf = idOfRef.current;
            const shown = new Set(old.map(idOf));
            return [...old, ...page.items.filter((item) => !shown.has(idOf(item)))];
          });
        }
        setNext(page.next_cursor);
        setDone(page.next_cursor === null);
        setLoading(false);
      },
      (err) => {
        if (mine !== generation.current) return;
        busy.current = false;
        // The list shown stays, with its changes made.
        if (replace) madeMeanwhile.current = null;
        setError(err);
        setLoading(false);
      },
    );
  }, []);

  // The key the state belongs to. The render right after the key changes comes before the effect
  // that resets the state: it must not show the previous key's items as if they answered this one.
  const stateKey = useRef(key);
  const stale = stateKey.current !== key;

  useEffect(() => {
    stateKey.current = key;
    setItemsState([]);
    setNext(null);
    setDone(false);
    fetchPage(null, true);
  }, [key]);

  return {
    items: stale ? [] : items,
    next: stale ? null : next,
    loading: stale || loading,
    error: stale ? null : error,
    done: stale ? false : done,
    loadMore: () => {
      if (next && !loading) fetchPage(next, false);
    },
    reload: () => fetchPage(null, true),
    retry: () => fetchPage(lastAsked.current, lastAsked.current === null),
    setItems: (update) => {
      madeMeanwhile.current?.push(update);
      setItemsState((old) => update(old));
    },
  };
}

/**
 * The end of an endless list: loads the next page when it scrolls into view (IntersectionObserver),
 * and is a button too, for keyboards and for browsers that do not observe.
 */
export function MoreItems<T>({ feed, label, endText }: { feed: Feed<T>; label: string; endText: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const feedRef = useRef(feed);
  feedRef.current = feed;
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) feedRef.current.loadMore();
    }, { rootMargin: '200px 0px' });
    observer.observe(el);
    return () => observer.disconnect();
  }, [feed.next]);
  return html`<div class="more" ref=${ref}>
    <${ErrorMessage} error=${feed.error} />
    ${feed.loading
      ? html`<${Loading} />`
      : feed.error
        ? retryable(feed.error) ? html`<button type="button" class="secondary" onClick=${feed.retry}>Try again</button>` : null
        : feed.next
        ? html`<button type="button" class="secondary" onClick=${feed.loadMore}>${label}</button>`
        : feed.done && !feed.error
          ? html`<p class="muted">${endText}</p>`
          : null}
  </div>`;
}

/** The first post among `from`'s siblings in one direction (a list's end, "Load older posts", is none). */
function nearestPost(from: Element, way: 'nextElementSibling' | 'previousElementSibling'): HTMLElement | null {
  for (let el = from[way]; el; el = el[way]) {
    const post = el.matches('article.post') ? el : el.querySelector('article.post');
    if (post) return post as HTMLElement;
  }
  return null;
}

/**
 * A post: author, time (a link to the post's page), text, images, likes, and its replies (a link to
 * its thread). `inThread`: shown within a thread, where the post it answers is shown above.
 */
export function PostCard({ post, onChange, onRemoved, onReply, inThread = false }: {
  post: Post;
  onChange?: (post: Post) => void;
  onRemoved?: (id: string) => void;
  /** Where the reply form is on the same screen (the post's own page): Reply goes to it. */
  onReply?: () => void;
  inThread?: boolean;
}) {
  const me = useStore(session).me;
  const [liked, setLiked] = useState(() => (me ? isLiked(me.id, post.id) : false));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  const handle = post.author?.handle;
  const author = handle ? '@' + handle : `user ${post.author_id}`;
  const mine = !!me && me.id === post.author_id;
  // Every post has these controls: each one's name says which post it acts on (whose, and how it
  // begins), so a list of buttons or links read out of context tells them apart.
  const quote = `“${excerpt(post.text, 40)}”`;
  const whose = mine ? `your post ${quote}` : `${author}'s post ${quote}`;
  // The post itself is named by its author, time and beginning: named by the author alone, every
  // post of a profile had the same name in a screen reader's list of articles.
  const name = `${author}, ${formatDateTime(post.created_at)}, ${quote}`;
  // A like of, or a reply to, one's own post arrives as a notification while the post is on the
  // screen: its counts are read again, so that they agree with what was just announced.
  const latest = useRef({ post, onChange });
  latest.current = { post, onChange };
  useEffect(() => {
    if (!mine || !onChange) return;
    return onNotification((n) => {
      if (n.post_id !== post.id || (n.type !== 'like' && n.type !== 'reply')) return;
      api.get<Post>(`/api/posts/${post.id}`).then(
        (fresh) => latest.current.onChange?.({ ...latest.current.post, like_count: fresh.like_count, reply_count: fresh.reply_count }),
        // Gone meanwhile, or unreachable: the counts stay as they were.
        () => undefined,
      );
    });
  }, [post.id, mine, !!onChange]);
  // Like is a toggle: its name and its text stay the same and aria-pressed says whether the post
  // is liked (a name turning into "Liked" or "Unlike" would say the state twice, or contradict it).

  async function remove() {
    setConfirming(false);
    setError(null);
    try {
      await api.del(`/api/posts/${post.id}`);
      announce('Post deleted.');
      // The focus was on the dialog's button, inside the post that goes: it moves to the post that
      // takes its place in the list (the next, else the one before), else to the screen's title,
      // instead of falling to the page's body.
      // A card is an item of a list (a thread's <li>) or a list's child itself (a timeline).
      const card = document.querySelector(`article.post[data-post-id="${post.id}"]`);
      const item = card?.closest('li') ?? card;
      const neighbour = item ? (nearestPost(item, 'nextElementSibling') ?? nearestPost(item, 'previousElementSibling')) : null;
      onRemoved?.(post.id);
      requestAnimationFrame(() => {
        const target = neighbour?.isConnected ? neighbour : document.querySelector<HTMLElement>('main h1');
        if (!target) return;
        if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
        target.focus();
      });
    } catch (err) {
      setError(err);
    }
  }

  async function toggleLike() {
    if (!me || busy) return;
    setBusy(true);
    setError(null);
    const want = !liked;
    const current = thisSession();
    try {
      if (want) await api.post(`/api/posts/${post.id}/like`);
      else await api.del(`/api/posts/${post.id}/like`);
      // Not if the session ended while the request was on its way (its records went with it).
      if (current()) rememberLike(me.id, post.id, want);
      setLiked(want);
      // The count is the server's: a like made elsewhere is not counted twice.
      const fresh = await api.get<Post>(`/api/posts/${post.id}`);
      onChange?.({ ...post, like_count: fresh.like_count, reply_count: fresh.reply_count });
      announce(want ? 'Liked.' : 'Like removed.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<article class="post" aria-label=${name} data-post-id=${post.id}>
    <header class="post-head">
      ${handle ? html`<a href=${href('/users/' + handle)} class="handle">@${handle}</a>` : html`<span class="handle">user ${post.author_id}</span>`}
      <a href=${href('/posts/' + post.id)} class="post-time"><time datetime=${post.created_at}>${formatDateTime(post.created_at)}</time></a>
    </header>
    ${post.reply_to && !inThread ? html`<p class="muted small reply-to">Replying to <a href=${href('/posts/' + post.reply_to)}>a post</a></p>` : null}
    <p class="post-text">${textParts(post.text).map((part) =>
      part.url ? html`<a href=${part.url} target="_blank" rel="noopener noreferrer nofollow ugc">${part.text}</a>` : part.text,
    )}</p>
    ${post.media_ids.length > 0
      ? html`<div class=${'post-media count-' + post.media_ids.length}>
          ${post.media_ids.map(
            (id, i) => html`<img src=${'/media/' + id} alt=${`Image ${i + 1} of ${post.media_ids.length} attached to the post`} loading="lazy" />`,
          )}
        </div>`
      : null}
    <footer class="post-actions">
      <button type="button" class="like" aria-pressed=${liked ? 'true' : 'false'} aria-disabled=${busy || !me ? 'true' : null} onClick=${toggleLike}
        aria-label=${`Like ${whose}`}>Like</button>
      <span class="count">${plural(post.like_count ?? 0, 'like')}</span>
      ${post.reply_count
        ? html`<a class="count replies-link" href=${href('/posts/' + post.id)}
            aria-label=${`${plural(post.reply_count, 'reply', 'replies')} to ${whose}`}>${plural(post.reply_count, 'reply', 'replies')}</a>`
        : html`<span class="count">0 replies</span>`}
      ${me
        ? onReply
          ? html`<button type="button" class="secondary small reply" onClick=${onReply} aria-label=${`Reply to ${whose}`}>Reply</button>`
          : html`<a class="reply" href=${href('/posts/' + post.id)} aria-label=${`Reply to ${whose}`}>Reply</a>`
        : null}
      ${mine ? html`<button type="button" class="secondary small delete-post" onClick=${() => setConfirming(true)} aria-label=${`Delete ${whose}`}>Delete</button>` : null}
    </footer>
    <${ErrorMessage} error=${error} />
    ${mine
      ? html`<${ConfirmDialog} open=${confirming} title="Delete this post?"
          text="It disappears from every timeline and its page. This cannot be undone."
          confirmLabel="Delete" onConfirm=${remove} onCancel=${() => setConfirming(false)} />`
      : null}
  </article>`;
}

/** A list of posts read page by page, scrolling on without end. */
export function PostList({ feed, empty, moreLabel = 'Load older posts', endText = 'You have reached the beginning.' }: {
  feed: Feed<Post>;
  empty: string;
  moreLabel?: string;
  endText?: string;
}) {
  const replace = (p: Post) => feed.setItems((items) => items.map((x) => (x.id === p.id ? p : x)));
  const drop = (id: string) => feed.setItems((items) => items.filter((x) => x.id !== id));
  return html`<div class="post-list">
    ${feed.items.length === 0 && feed.done && !feed.error ? html`<p class="muted">${empty}</p>` : null}
    ${feed.items.map((p) => html`<${PostCard} key=${p.id} post=${p} onChange=${replace} onRemoved=${drop} />`)}
    ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label=${moreLabel} endText=${endText} />` : null}
  </div>`;
}

let dialogCount = 0;

/** A modal confirmation (the native <dialog>: focus moves in, Escape cancels, focus returns). */
export function ConfirmDialog({ open, title, text, confirmLabel, onConfirm, onCancel }: {
  open: boolean;
  title: string;
  text: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Several may be on one screen (one per own post): ids of their own.
  const [id] = useState(() => `confirm-${++dialogCount}`);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return html`<dialog ref=${ref} aria-labelledby=${id + '-title'} aria-describedby=${id + '-text'} onCancel=${(e: Event) => {
    e.preventDefault();
    onCancel();
  }}>
    <h2 id=${id + '-title'}>${title}</h2>
    <p id=${id + '-text'}>${text}</p>
    <div class="actions">
      <button type="button" class="danger" onClick=${onConfirm}>${confirmLabel}</button>
      <button type="button" class="secondary" onClick=${onCancel} autofocus>Cancel</button>
    </div>
  </dialog>`;
}

export function userHref(handle: string): string {
  return href('/users/' + handle);
}

