// The microblog's write and read operations (posts, likes, follows, lists), independent of HTTP.
// Every write goes through the thread's group commit: it is answered only after the transaction
// that holds it, and the outbox event it causes, has been synced to disk.
import type { AccountStore, User } from '../accounts/store';
import { publicUser } from '../accounts/store';
import { forbidden, invalidField, notFound } from '../http/errors';
import { isIdString } from '../core/snowflake';
import { normalizePostText } from '../core/post-text';
import { GroupCommit } from './group-commit';
import { SocialStore, type PostRow, type UserListRow } from './store';

export interface Post {
  id: string;
  text: string;
  author_id: string;
  media_ids: string[];
  reply_to: string | null;
  created_at: string;
}

export interface PostWithCounts extends Post {
  like_count: number;
  reply_count: number;
}

export interface NewPost {
  text: string;
  media_ids?: string[];
  reply_to?: string | null;
}

export interface Page<T> {
  items: T[];
  /** Exclusive upper bound of the next page, or null on the last page. */
  next: bigint | null;
}

/** The largest 63-bit value, above every id minted: the position before the first page. */
export const TOP = (1n << 63n) - 1n;

export function postOf(row: PostRow): PostWithCounts {
  return {
    id: row.id,
    text: row.text,
    author_id: row.author_id,
    media_ids: JSON.parse(row.media_ids) as string[],
    reply_to: row.reply_to,
    created_at: row.created_at,
    like_count: row.like_count,
    reply_count: row.reply_count,
  };
}

/** A path id that is not a well-formed post id names no post. */
export function postIdOf(ref: string): bigint | null {
  return isIdString(ref) ? BigInt(ref) : null;
}

export class SocialService {
  readonly store: SocialStore;
  readonly writes: GroupCommit;

  constructor(
    store: SocialStore,
    private readonly accounts: AccountStore,
    private readonly newId: () => string,
  ) {
    this.store = store;
    this.writes = new GroupCommit(store.db);
  }

  /** Validates and durably stores a post; resolves after the commit that holds it. */
  createPost(authorId: string, input: NewPost): Promise<Post> {
    const checked = normalizePostText(input.text);
    if (!checked.ok) throw invalidField('text', checked.message);
    const mediaIds = input.media_ids ?? [];
    for (let i = 0; i < mediaIds.length; i++) {
      if (mediaIds.indexOf(mediaIds[i]) !== i) throw invalidField(`media_ids.${i}`, 'the same media id is listed twice');
    }
    let replyTo: bigint | null = null;
    if (input.reply_to !== undefined && input.reply_to !== null) {
      replyTo = postIdOf(input.reply_to);
      if (replyTo === null) throw invalidField('reply_to', 'no such post');
    }
    const text = checked.text;
    return this.writes.run(() => {
      for (let i = 0; i < mediaIds.length; i++) {
        if (this.store.mediaOwner(mediaIds[i]) !== authorId) throw invalidField(`media_ids.${i}`, 'no such media uploaded by you');
      }
      let parentAuthor: string | null = null;
      if (replyTo !== null) {
        const parent = this.store.postAuthor(replyTo);
        if (!parent || parent.deleted_at !== null) throw invalidField('reply_to', 'no such post');
        parentAuthor = parent.author_id;
      }
      const id = this.newId();
      const createdAt = new Date().toISOString();
      const post: Post = { id, text, author_id: authorId, media_ids: mediaIds, reply_to: replyTo === null ? null : replyTo.toString(), created_at: createdAt };
      this.store.insertPost(BigInt(id), authorId, text, mediaIds, replyTo, createdAt);
      this.store.event('post_created', authorId, null, id, { reply_to: post.reply_to }, createdAt);
      if (replyTo !== null) {
        this.store.addReplyCount(replyTo, 1);
        this.store.event('reply', authorId, parentAuthor, post.reply_to, { reply_id: id }, createdAt);
      }
      return post;
    });
  }

  getPost(ref: string): PostWithCounts {
    const id = postIdOf(ref);
    const row = id === null ? undefined : this.store.livePost(id);
    if (!row) throw notFound('No such post.');
    return postOf(row);
  }

  deletePost(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    return this.writes.run(() => {
      const row = this.store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      if (row.author_id !== userId) throw forbidden('Only the author can delete a post.');
      const now = new Date().toISOString();
      this.store.softDelete(id, now);
      if (row.reply_to !== null) this.store.addReplyCount(BigInt(row.reply_to), -1);
      this.store.event('post_deleted', userId, null, ref, { reply_to: row.reply_to }, now);
    });
  }

  like(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    return this.writes.run(() => {
      const row = this.store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      const now = new Date().toISOString();
      if (this.store.like(id, userId, now)) this.store.event('like', userId, row.author_id, ref, {}, now);
    });
  }

  unlike(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    return this.writes.run(() => {
      const row = this.store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      if (this.store.unlike(id, userId)) this.store.event('unlike', userId, row.author_id, ref, {}, new Date().toISOString());
    });
  }

  userOrThrow(ref: string): User {
    const user = this.accounts.userByRef(ref);
    if (!user) throw notFound('No such user.');
    return user;
  }

  follow(followerId: string, ref: string): Promise<void> {
    const target = this.userOrThrow(ref);
    if (target.id === followerId) throw invalidField('id', 'you cannot follow yourself');
    return this.writes.run(() => {
      const now = new Date().toISOString();
      if (this.store.follow(followerId, target.id, BigInt(this.newId()), now)) this.store.event('follow', followerId, target.id, null, {}, now);
    });
  }

  unfollow(followerId: string, ref: string): Promise<void> {
    const target = this.userOrThrow(ref);
    if (target.id === followerId) throw invalidField('id', 'you cannot unfollow yourself');
    return this.writes.run(() => {
      if (this.store.unfollow(followerId, target.id)) this.store.event('unfollow', followerId, target.id, null, {}, new Date().toISOString());
    });
  }

  userPosts(userId: string, before: bigint, limit: number): Page<PostWithCounts> {
    const rows = this.store.authorPage(userId, before, limit + 1);
    const items = rows.slice(0, limit).map(postOf);
    return { items, next: rows.length > limit ? BigInt(items[items.length - 1].id) : null };
  }

  followers(userId: string, before: bigint, limit: number): Page<User> {
    return userPage(this.store.followersPage(userId, before, limit + 1), limit);
  }

  following(userId: string, before: bigint, limit: number): Page<User> {
    return userPage(this.store.followingPage(userId, before, limit + 1), limit);
  }
}

function userPage(rows: UserListRow[], limit: number): Page<User> {
  const items = rows.slice(0, limit).map(publicUser);
  return { items, next: rows.length > limit ? BigInt(rows[limit - 1].since) : null };
}
