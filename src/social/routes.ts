// HTTP routes of the microblog: posts, likes, follows, profile lists and the home timeline.
import type { Reply, Route } from '../http/router';
import { callerAction, parseWith, queryParams } from '../http/router';
import { pageBody, pageRequest, type Page } from '../http/paging';
import type { Post, SocialService } from './service';
import type { HomeTimelineReader } from './timeline';
import type { CursorCodec } from '../core/cursor';
import { createPostSchema } from './schema';
import { postFieldsJson } from './post-json';

const FOLLOWING: Reply = { status: 200, json: { following: true } };

/** The 201 of a new post: its fixed fields (post-json.ts). */
export function created(post: Post): Reply {
  return { status: 201, body: postFieldsJson(post) + '}', contentType: 'application/json' };
}

/**
 * GET /api/users/{id|@handle}/<name>: one of a user's lists, newest first, with cursors that are
 * valid only for that list of that user.
 */
function userListRoute<T>(
  social: SocialService,
  cursors: CursorCodec,
  name: string,
  list: (userId: string, before: bigint, limit: number) => Page<T>,
): Route {
  return {
    method: 'GET',
    path: `/api/users/:id/${name}`,
    handler(ctx) {
      const user = social.userOrThrow(ctx.params[0]);
      const kind = `${name}:${user.id}`;
      const page = pageRequest(queryParams(ctx), kind, cursors);
      return { status: 200, json: pageBody(kind, list(user.id, page.before, page.limit), cursors) };
    },
  };
}

export function socialRoutes(social: SocialService, timeline: HomeTimelineReader, cursors: CursorCodec): Route[] {
  // A timeline's next cursor is a hash of (user, id); readers re-read the same page, so the last
  // cursor issued to each user is kept (per thread, bounded) instead of hashed per request.
  const timelineCursors = new Map<string, { next: bigint; cursor: string }>();
  const timelineCursor = (userId: string, kind: string, next: bigint | null): string | null => {
    if (next === null) return null;
    const last = timelineCursors.get(userId);
    if (last && last.next === next) return last.cursor;
    const cursor = cursors.encode(kind, [next.toString()]);
    if (timelineCursors.size >= 50_000) timelineCursors.clear();
    timelineCursors.set(userId, { next, cursor });
    return cursor;
  };
  return [
    {
      method: 'POST',
      path: '/api/posts',
      auth: true,
      body: 'json',
      handler(ctx) {
        const input = parseWith(createPostSchema, ctx.json);
        return social.createPost(ctx.principal!.userId, input).then(created);
      },
    },
    {
      method: 'GET',
      path: '/api/posts/:id',
      handler: (ctx) => ({ status: 200, json: social.getPost(ctx.params[0]) }),
    },
    {
      method: 'GET',
      path: '/api/posts/:id/replies',
      handler(ctx) {
        const id = ctx.params[0];
        // Cursors of one post's replies only (the list is named by its parent).
        const kind = `replies:${id}`;
        const page = pageRequest(queryParams(ctx), kind, cursors);
        return { status: 200, json: pageBody(kind, social.replies(id, page.after, page.limit), cursors) };
      },
    },
    callerAction('DELETE', '/api/posts/:id', (userId, id) => social.deletePost(userId, id)),
    callerAction('POST', '/api/posts/:id/like', (userId, id) => social.like(userId, id)),
    callerAction('DELETE', '/api/posts/:id/like', (userId, id) => social.unlike(userId, id)),
    userListRoute(social, cursors, 'posts', (id, before, limit) => social.userPosts(id, before, limit)),
    callerAction('POST', '/api/users/:id/follow', (userId, id) => social.follow(userId, id), FOLLOWING),
    callerAction('DELETE', '/api/users/:id/follow', (userId, id) => social.unfollow(userId, id)),
    userListRoute(social, cursors, 'followers', (id, before, limit) => social.followers(id, before, limit)),
    userListRoute(social, cursors, 'following', (id, before, limit) => social.following(id, before, limit)),
    {
      method: 'GET',
      path: '/api/timeline',
      auth: true,
      handler(ctx) {
        const userId = ctx.principal!.userId;
        const kind = `timeline:${userId}`;
        const page = pageRequest(queryParams(ctx), kind, cursors);
        // Written as bytes from fragments each thread serialised once (same JSON as pageBody).
        const body = timeline.readBody(userId, page.before, page.limit, (next) => timelineCursor(userId, kind, next));
        return { status: 200, body, contentType: 'application/json' };
      },
    },
  ];
}
