// The microblog's write and read operations (posts, likes, follows, lists), independent of HTTP:
// they take checked input and return domain objects; routes.ts turns them into replies. Every
// write is sent to the writer as a named operation (writes.ts): it is answered only after the
// group transaction that holds it, and the outbox event it causes, has been synced.
import type { AccountStore, User } from '../accounts/store';
import { publicUser } from '../accounts/store';
import { invalidField, notFound } from '../http/errors';
import { pageOf, type Page } from '../http/paging';
import { isIdString } from '../core/snowflake';
import { normalizePostText } from '../core/post-text';
import { isoNow } from '../core/clock';
import type { Writes } from '../writer/operations';
import { createdPost, type CreatePost, type SocialWrites } from './writes';
import { SocialStore, postFields, type Post, type PostRow, type TimelineRow, type UserListRow } from './store';

export type { Post } from './store';

export interface PostWithCounts extends Post {
  like_count: number;
  reply_count: number;
}

export interface NewPost {
  text: string;
  media_ids?: string[];
  reply_to?: string | null;
}

export function postOf(row: PostRow): PostWithCounts {
  return { ...postFields(row), like_count: row.like_count, reply_count: row.reply_count };
}

/** A post as lists of posts by several authors show it (timelines, replies, search). */
export interface PostWithAuthor extends PostWithCounts {
  author: { id: string; handle: string };
}

function withAuthor(row: TimelineRow): PostWithAuthor {
  return { ...postOf(row), author: { id: row.author_id, handle: row.handle } };
}

/** A path id that is not a well-formed post id names no post. */
export function postIdOf(ref: string): bigint | null {
  return isIdString(ref) ? BigInt(ref) : null;
}

/**
 * What must reach every reader before a change is answered: the timeline reader keeps posts'
 * liveness and users' followees between reads (timeline.ts), so a deletion or a follow change is
 * told to every HTTP thread first.
 */
export interface SocialChanges {
  /** A post about to be sent to the writer, as it will be stored (this thread's reader uses it). */
  postWriting(post: Post): void;
  /** A post now durable, before it is answered: its author's next read, on any thread, shows it. */
  postWritten(post: Post): void;
  postDeleted(id: string): Promise<void>;
  followsChanged(userId: string): Promise<void>;
}

const NO_READERS: SocialChanges = { postWriting: () => {}, postWritten: () => {}, postDeleted: async () => {}, followsChanged: async () => {} };

export class SocialService {
  constructor(
    readonly store: SocialStore,
    private readonly accounts: AccountStore,
    private readonly newId: () => string,
    private readonly writes: Writes<SocialWrites>,
    private readonly changes: SocialChanges = NO_READERS,
  ) {}

  /** Validates and durably stores a post; resolves after the commit that holds it. */
  createPost(authorId: string, input: NewPost): Promise<Post> {
    const checked = normalizePostText(input.text);
    if (!checked.ok) throw invalidField('text', checked.message);
    const mediaIds = input.media_ids ?? [];
    for (let i = 0; i < mediaIds.length; i++) {
      if (mediaIds.indexOf(mediaIds[i]) !== i) throw invalidField(`media_ids.${i}`, 'the same media id is listed twice');
    }
    let replyTo: string | null = null;
    if (input.reply_to !== undefined && input.reply_to !== null) {
      const parent = postIdOf(input.reply_to);
      if (parent === null) throw invalidField('reply_to', 'no such post');
      replyTo = parent.toString();
    }
    const post: CreatePost = { id: this.newId(), authorId, text: checked.text, mediaIds, replyTo, createdAt: isoNow() };
    this.changes.postWriting(createdPost(post));
    // Media ownership and the parent's existence are checked by the writer, inside the transaction.
    return this.writes.run('createPost', post).then((stored) => {
      this.changes.postWritten(stored);
      return stored;
    });
  }

  getPost(ref: string): PostWithCounts {
    const id = postIdOf(ref);
    const row = id === null ? undefined : this.store.livePost(id);
    if (!row) throw notFound('No such post.');
    return postOf(row);
  }

  async deletePost(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    await this.writes.run('deletePost', { userId, postId: id.toString(), now: isoNow() });
    await this.changes.postDeleted(id.toString());
  }

  like(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    return this.writes.run('like', { userId, postId: id.toString(), now: isoNow() });
  }

  unlike(userId: string, ref: string): Promise<void> {
    const id = postIdOf(ref);
    if (id === null) throw notFound('No such post.');
    return this.writes.run('unlike', { userId, postId: id.toString(), now: isoNow() });
  }

  userOrThrow(ref: string): User {
    const user = this.accounts.userByRef(ref);
    if (!user) throw notFound('No such user.');
    return user;
  }

  async follow(followerId: string, ref: string): Promise<void> {
    const target = this.userOrThrow(ref);
    if (target.id === followerId) throw invalidField('id', 'you cannot follow yourself');
    await this.writes.run('follow', { followerId, followeeId: target.id, sinceId: this.newId(), now: isoNow() });
    await this.changes.followsChanged(followerId);
  }

  async unfollow(followerId: string, ref: string): Promise<void> {
    const target = this.userOrThrow(ref);
    // Unfollowing oneself is 204 like any unfollow of someone not followed (CONTRACT.md makes only
    // following oneself a 400): there is no follow to remove, and nothing changes.
    if (target.id === followerId) return;
    await this.writes.run('unfollow', { followerId, followeeId: target.id, now: isoNow() });
    await this.changes.followsChanged(followerId);
  }

  /** The direct replies to a live post, oldest first; 404 when the post is unknown or deleted. */
  replies(ref: string, after: bigint, limit: number): Page<PostWithAuthor> {
    const id = postIdOf(ref);
    if (id === null || !this.store.livePost(id)) throw notFound('No such post.');
    return pageOf(this.store.repliesPage(id, after, limit + 1), limit, withAuthor, (row) => BigInt(row.id));
  }

  userPosts(userId: string, before: bigint, limit: number): Page<PostWithCounts> {
    return pageOf(this.store.authorPage(userId, before, limit + 1), limit, postOf, (row) => BigInt(row.id));
  }

  followers(userId: string, before: bigint, limit: number): Page<User> {
    return userPage(this.store.followersPage(userId, before, limit + 1), limit);
  }

  following(userId: string, before: bigint, limit: number): Page<User> {
    return userPage(this.store.followingPage(userId, before, limit + 1), limit);
  }
}

function userPage(rows: UserListRow[], limit: number): Page<User> {
  return pageOf(rows, limit, publicUser, (row) => BigInt(row.since));
}
