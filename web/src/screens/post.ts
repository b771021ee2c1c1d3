// A post's own page as a thread: the posts it answers (up to a few levels), the post, a form to
// reply, and its direct replies, oldest first, page by page (GET /api/posts/{id}/replies).
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { Problem, api, withQuery, type Page, type Post as PostData } from '../api';
import { ErrorMessage, Loading, MoreItems, PostCard, ScreenTitle, announce, useFeed, type Feed } from '../components';
import { plural } from '../format';
import { features } from '../features';
import { href, navigate } from '../router';
import { useStore } from '../store';
import { forgetPost, postById } from '../users';
import { Compose } from './compose';
import { MuteThread } from './notification-settings';

/** How many posts above this one the page shows; a link leads further up. */
const MAX_ANCESTORS = 5;

interface Ancestors {
  posts: PostData[];
  /** The chain goes on above the first shown: its id. */
  more: string | null;
  /** The chain ends in a post that was deleted. */
  deleted: boolean;
}

/**
 * The posts above one in its thread, read afresh: one of them may have been deleted, or its counts
 * changed, since this tab last read it.
 */
async function ancestorsOf(post: PostData): Promise<Ancestors> {
  const chain: PostData[] = [];
  let next = post.reply_to;
  while (next && chain.length < MAX_ANCESTORS) {
    const parent = await postById(next, true);
    if (!parent) return { posts: chain.reverse(), more: null, deleted: true };
    chain.push(parent);
    next = parent.reply_to;
  }
  return { posts: chain.reverse(), more: next, deleted: false };
}

function Replies({ post, feed, onRemoved }: { post: PostData; feed: Feed<PostData>; onRemoved: () => void }) {
  const replace = (p: PostData) => feed.setItems((items) => items.map((x) => (x.id === p.id ? p : x)));
  const drop = (id: string) => {
    feed.setItems((items) => items.filter((x) => x.id !== id));
    onRemoved();
  };
  return html`<section aria-labelledby="replies-title" class="replies">
    <h2 id="replies-title">${post.reply_count ? plural(post.reply_count, 'reply', 'replies') : 'Replies'}</h2>
    ${feed.items.length === 0 && feed.done && !feed.error ? html`<p class="muted">No replies yet.</p>` : null}
    <ol class="thread-replies post-list">
      ${feed.items.map((p) => html`<li key=${p.id}><${PostCard} post=${p} onChange=${replace} onRemoved=${drop} inThread=${true} /></li>`)}
    </ol>
    ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label="Load more replies" endText="That is every reply." />` : null}
  </section>`;
}

export function PostPage({ id }: { id: string }) {
  const have = useStore(features);
  const [post, setPost] = useState<PostData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [above, setAbove] = useState<Ancestors | null>(null);
  const replies = useFeed(
    (cursor) => api.get<Page<PostData>>(withQuery(`/api/posts/${encodeURIComponent(id)}/replies`, { limit: 20, cursor })),
    'replies:' + id,
  );

  async function load(current: () => boolean) {
    const p = await postById(id, true);
    if (!current()) return;
    if (!p) {
      setError(new Problem('This post does not exist or was deleted.'));
      return;
    }
    setPost(p);
    if (p.reply_to) ancestorsOf(p).then((a) => current() && setAbove(a), () => current() && setAbove({ posts: [], more: p.reply_to, deleted: false }));
  }

  useEffect(() => {
    let current = true;
    setPost(null);
    setAbove(null);
    setError(null);
    load(() => current).catch((err) => current && setError(err));
    return () => {
      current = false;
    };
  }, [id]);

  function replied(reply: PostData) {
    // Replies are oldest first: the new one is the last, shown at once when the list is complete.
    if (replies.done) {
      replies.setItems((items) => [...items.filter((x) => x.id !== reply.id), reply]);
      announce('Reply posted; it is the last in the thread.');
    } else {
      announce('Reply posted; it is at the end of the thread.');
    }
    rereadCount();
  }

  /** The reply count is the server's: read again after a reply came or went. */
  function rereadCount() {
    postById(id, true).then((p) => p && setPost(p), setError);
  }

  return html`<div class="screen">
    <${ScreenTitle}>${post?.author ? `Post by @${post.author.handle}` : 'Post'}</${ScreenTitle}>
    ${error ? html`<${ErrorMessage} error=${error} />` : null}
    ${above && (above.posts.length > 0 || above.more || above.deleted)
      ? html`<section aria-label="Earlier in the thread" class="ancestors">
          ${above.more ? html`<p class="small"><a href=${href('/posts/' + above.more)}>Earlier posts in the thread</a></p>` : null}
          ${above.deleted
            ? html`<p class="muted small">${above.posts.length === 0 ? 'The post this replies to was deleted.' : 'An earlier post in this thread was deleted.'}</p>`
            : null}
          <ol class="post-list thread-above">
            ${above.posts.map((p) => html`<li key=${p.id}><${PostCard} post=${p} inThread=${true} onChange=${(changed: PostData) =>
              setAbove((a) => a && { ...a, posts: a.posts.map((x) => (x.id === changed.id ? changed : x)) })} /></li>`)}
          </ol>
        </section>`
      : null}
    ${post
      ? html`<div class="focus-post"><${PostCard} post=${post} inThread=${!!above && above.posts.length > 0} onChange=${setPost}
          onReply=${() => document.getElementById('compose-text')?.focus()} onRemoved=${() => {
          forgetPost(post.id);
          navigate('/');
        }} /></div>`
      : error ? null : html`<${Loading} />`}
    ${post && have.notifications ? html`<${MuteThread} postId=${post.id} />` : null}
    ${post ? html`<${Compose} replyTo=${post.id} onPosted=${replied} />` : null}
    ${post ? html`<${Replies} post=${post} feed=${replies} onRemoved=${rereadCount} />` : null}
  </div>`;
}
