// Users and posts looked up by id, once per page load: a notification names its actors and its
// post by id only, and a post names its author by id. Unknown or deleted ones answer null.
import { ApiError, api, type Post, type User } from './api';

const users = new Map<string, Promise<User | null>>();
const posts = new Map<string, Promise<Post | null>>();

function orNull<T>(p: Promise<T>, forget: () => void): Promise<T | null> {
  return p.catch((err) => {
    // A 404 is an answer (deleted, unknown); anything else may pass, so ask again next time.
    if (err instanceof ApiError && err.status === 404) return null;
    forget();
    throw err;
  });
}

export function userById(id: string): Promise<User | null> {
  let p = users.get(id);
  if (!p) {
    p = orNull(api.get<User>(`/api/users/${encodeURIComponent(id)}`), () => users.delete(id));
    users.set(id, p);
  }
  return p;
}

/** A post with `author` filled in; null when it is unknown or deleted. */
export function postById(id: string, fresh = false): Promise<Post | null> {
  let p = fresh ? undefined : posts.get(id);
  if (!p) {
    p = orNull(
      (async () => {
        const post = await api.get<Post>(`/api/posts/${encodeURIComponent(id)}`);
        const author = await userById(post.author_id);
        return author ? { ...post, author: { id: author.id, handle: author.handle } } : post;
      })(),
      () => posts.delete(id),
    );
    posts.set(id, p);
  }
  return p;
}

/** Forgets a post (deleted here, or its counts changed). */
export function forgetPost(id: string): void {
  posts.delete(id);
}
