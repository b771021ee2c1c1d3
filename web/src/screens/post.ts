// One post on its own page, with a form to reply to it.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Post as PostData, type User } from '../api';
import { ErrorMessage, Loading, PostCard, ScreenTitle } from '../components';
import { href, navigate } from '../router';
import { Compose } from './compose';

export function PostPage({ id }: { id: string }) {
  const [post, setPost] = useState<PostData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [replies, setReplies] = useState<PostData[]>([]);

  async function load(current: () => boolean) {
    const p = await api.get<PostData>(`/api/posts/${encodeURIComponent(id)}`);
    // A post names its author by id; the handle comes from the user's record.
    const author = await api.get<User>(`/api/users/${encodeURIComponent(p.author_id)}`);
    if (current()) setPost({ ...p, author: { id: author.id, handle: author.handle } });
  }

  useEffect(() => {
    let current = true;
    setPost(null);
    setError(null);
    setReplies([]);
    load(() => current).catch((err) => current && setError(err));
    return () => {
      current = false;
    };
  }, [id]);

  function replied(reply: PostData) {
    setReplies((r) => [...r, reply]);
    // The reply count is the server's.
    load(() => true).catch(setError);
  }

  return html`<div class="screen">
    <${ScreenTitle}>${post?.author ? `Post by @${post.author.handle}` : 'Post'}</${ScreenTitle}>
    ${error ? html`<${ErrorMessage} error=${error} />` : null}
    ${post ? html`<${PostCard} post=${post} onChange=${setPost} onRemoved=${() => navigate('/')} />` : error ? null : html`<${Loading} />`}
    ${
      // The thread (GET /api/posts/{id}/replies) comes here once the server answers it
      // (features.replies); until then the page shows the count, and the replies written here.
      null
    }
    ${post
      ? html`<${Compose} replyTo=${post.id} onPosted=${replied} />
          ${replies.length
            ? html`<section aria-labelledby="your-replies">
                <h2 id="your-replies">Your replies</h2>
                <ul class="plain">
                  ${replies.map((r) => html`<li><a href=${href('/posts/' + r.id)}>${r.text}</a></li>`)}
                </ul>
              </section>`
            : null}`
      : null}
  </div>`;
}
