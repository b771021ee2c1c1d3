// The home timeline: compose, the posts of everyone followed (and one's own), endless scrolling,
// and a "new posts" button fed by polling the first page.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, withQuery, type Page, type Post } from '../api';
import { PostList, ScreenTitle, announce, useFeed } from '../components';
import { isNewer } from '../format';
import { Compose } from './compose';

/** How often the first page is asked again for posts newer than those shown. */
export const NEW_POSTS_POLL_MS = 5000;
const PAGE = 20;

export function Home() {
  const feed = useFeed((cursor) => api.get<Page<Post>>(withQuery('/api/timeline', { limit: PAGE, cursor })), 'home');
  // The newest first page seen by the poll, and how many of its posts are not shown yet.
  const fresh = useRef<Page<Post> | null>(null);
  const [newCount, setNewCount] = useState(0);
  // One's own new posts are put on top at once (posted), before the server has given the posts
  // others made meanwhile: what the poll counts from is the newest post the server gave.
  const ownPosts = useRef(new Set<string>());
  const newest = feed.items.find((p) => !ownPosts.current.has(p.id))?.id ?? null;
  const newestRef = useRef(newest);
  newestRef.current = newest;
  const shownRef = useRef(feed.items);
  shownRef.current = feed.items;
  // No poll while a page is on its way: a reload would show what it counts.
  const loadingRef = useRef(true);
  loadingRef.current = feed.loading;

  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const poll = async () => {
      // A hidden tab asks nothing; it catches up when shown again.
      if (!document.hidden && !loadingRef.current) {
        try {
          const page = await api.get<Page<Post>>(withQuery('/api/timeline', { limit: PAGE }));
          if (stopped) return;
          const count = unseen(page, newestRef.current, shownRef.current).length;
          fresh.current = page;
          setNewCount((before) => {
            if (count > 0 && count !== before) announce(`${count === PAGE ? PAGE + ' or more' : count} new post${count === 1 ? '' : 's'}.`);
            return count;
          });
        } catch {
          // The next poll tries again; a failed poll is not worth interrupting anyone for.
        }
      }
      if (!stopped) timer = window.setTimeout(poll, NEW_POSTS_POLL_MS);
    };
    timer = window.setTimeout(poll, NEW_POSTS_POLL_MS);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, []);

  function showNew() {
    const page = fresh.current;
    const top = newestRef.current;
    if (!page) return;
    const newer = unseen(page, top, feed.items);
    const onTop = top !== null && page.items.some((p) => !isNewer(p.id, top));
    if (onTop) {
      // The page reaches back to what is shown: the new posts go in, newest first (one's own posts
      // put on top meanwhile may be newer than some of them).
      feed.setItems((items) => newestFirst([...newer, ...items]));
    } else {
      // More new posts than a page: start over from the newest.
      feed.reload();
    }
    setNewCount(0);
    // The newest post takes the focus once the list shows it (after this render, or the reload).
    setFocusAfter({ id: onTop ? newer[0]?.id ?? null : null });
  }

  // Which post to focus once the list is drawn: by id, or (after a reload) the first.
  const [focusAfter, setFocusAfter] = useState<{ id: string | null } | null>(null);
  useEffect(() => {
    if (!focusAfter || feed.loading) return;
    const first = document.querySelector<HTMLElement>(focusAfter.id ? `.post-list article[data-post-id="${focusAfter.id}"]` : '.post-list article');
    if (!first) return;
    first.setAttribute('tabindex', '-1');
    first.focus();
    setFocusAfter(null);
  }, [focusAfter, feed.items, feed.loading]);

  function posted(post: Post) {
    ownPosts.current.add(post.id);
    feed.setItems((items) => [post, ...items.filter((p) => p.id !== post.id)]);
  }

  return html`<div class="screen">
    <${ScreenTitle}>Home</${ScreenTitle}>
    <${Compose} onPosted=${posted} />
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title" class="visually-hidden">Timeline</h2>
      ${newCount > 0
        ? html`<button type="button" class="new-posts" onClick=${showNew}>
            Show ${newCount === PAGE ? `${PAGE}+` : newCount} new post${newCount === 1 ? '' : 's'}
          </button>`
        : null}
      <${PostList} feed=${feed}
        empty=${newCount > 0 ? 'New posts have arrived: show them with the button above.' : 'Nothing here yet. Write a post, or follow someone from their profile.'} />
    </section>
  </div>`;
}

/** The posts of a first page newer than `top` (the newest the server gave) that are not shown. */
function unseen(page: Page<Post>, top: string | null, shown: Post[]): Post[] {
  const ids = new Set(shown.map((p) => p.id));
  return page.items.filter((p) => (top === null || isNewer(p.id, top)) && !ids.has(p.id));
}

/** Posts newest first (by id, as the timeline orders them), each once. */
function newestFirst(posts: Post[]): Post[] {
  const once = new Map<string, Post>();
  for (const p of posts) if (!once.has(p.id)) once.set(p.id, p);
  return [...once.values()].sort((a, b) => (a.id === b.id ? 0 : isNewer(a.id, b.id) ? -1 : 1));
}
