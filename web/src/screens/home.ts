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
  const newest = feed.items.length ? feed.items[0].id : null;
  const newestRef = useRef(newest);
  newestRef.current = newest;
  const loadedRef = useRef(false);
  loadedRef.current = !feed.loading || feed.items.length > 0;

  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const poll = async () => {
      // A hidden tab asks nothing; it catches up when shown again.
      if (!document.hidden && loadedRef.current) {
        try {
          const page = await api.get<Page<Post>>(withQuery('/api/timeline', { limit: PAGE }));
          if (stopped) return;
          const top = newestRef.current;
          const count = top === null ? page.items.length : page.items.filter((p) => isNewer(p.id, top)).length;
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
    const newer = top === null ? page.items : page.items.filter((p) => isNewer(p.id, top));
    const onTop = top !== null && newer.length < page.items.length;
    if (onTop) {
      // The page reaches back to what is shown: put the new posts on top.
      const shown = new Set(newer.map((p) => p.id));
      feed.setItems((items) => [...newer, ...items.filter((p) => !shown.has(p.id))]);
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
