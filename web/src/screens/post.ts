// One post on its own page.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Post as PostData, type User } from '../api';
import { ErrorMessage, Loading, PostCard, ScreenTitle } from '../components';

export function PostPage({ id }: { id: string }) {
  const [post, setPost] = useState<PostData | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let current = true;
    setPost(null);
    setError(null);
    (async () => {
      const p = await api.get<PostData>(`/api/posts/${encodeURIComponent(id)}`);
      // A post names its author by id; the handle comes from the user's record.
      const author = await api.get<User>(`/api/users/${encodeURIComponent(p.author_id)}`);
      if (current) setPost({ ...p, author: { id: author.id, handle: author.handle } });
    })().catch((err) => current && setError(err));
    return () => {
      current = false;
    };
  }, [id]);

  return html`<div class="screen">
    <${ScreenTitle}>${post?.author ? `Post by @${post.author.handle}` : 'Post'}</${ScreenTitle}>
    ${error ? html`<${ErrorMessage} error=${error} />` : post ? html`<${PostCard} post=${post} onChange=${setPost} />` : html`<${Loading} />`}
    ${
      // Replies as a thread come here once the server answers GET /api/posts/{id}/replies
      // (features.replies); until then the reply count above is all there is.
      null
    }
  </div>`;
}
