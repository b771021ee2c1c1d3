// The durable writes of the microblog as named operations on plain data. HTTP threads validate
// what they can alone, then send `{ op, args }` to the writer, which runs each operation
// against its own connection inside its group transaction (see group-commit.ts). Checks made here,
// inside the transaction, are the authoritative ones: they see every earlier commit.
// Arguments and results cross threads by structured clone: strings, numbers, arrays, plain objects
// (post ids as decimal strings, never bigint in results).
import { forbidden, invalidField, notFound } from '../http/errors';
import type { SocialStore } from './store';
import { OUTBOX_CONSUMERS } from './outbox-cursor';

export interface Post {
  id: string;
  text: string;
  author_id: string;
  media_ids: string[];
  reply_to: string | null;
  created_at: string;
}

export interface WriteArgs {
  createPost: { id: string; authorId: string; text: string; mediaIds: string[]; replyTo: string | null; createdAt: string };
  deletePost: { userId: string; postId: string; now: string };
  like: { userId: string; postId: string; now: string };
  unlike: { userId: string; postId: string; now: string };
  follow: { followerId: string; followeeId: string; sinceId: string; now: string };
  unfollow: { followerId: string; followeeId: string; now: string };
  insertMedia: { id: string; ownerId: string; contentType: string; size: number; now: string };
  /** An outbox consumer's position (outbox.ts): every event up to `seq` was processed. */
  advanceConsumer: { name: string; seq: number; now: string };
  /** Files the posts created since the last filing under their authors (store.indexAuthorPosts). */
  indexAuthorPosts: { now: string };
  /** Deletes up to `limit` outbox events made before `before` that every consumer processed. */
  pruneOutbox: { before: string; limit: number };
}

export interface WriteResults {
  createPost: Post;
  deletePost: void;
  like: void;
  unlike: void;
  follow: void;
  unfollow: void;
  insertMedia: void;
  advanceConsumer: void;
  indexAuthorPosts: number;
  pruneOutbox: number;
}

export type WriteOpName = keyof WriteArgs;

type Ops = { [K in WriteOpName]: (store: SocialStore, args: WriteArgs[K]) => WriteResults[K] };

/** What a createPost answers: the post as stored. */
function createdPost(a: WriteArgs['createPost']): Post {
  return { id: a.id, text: a.text, author_id: a.authorId, media_ids: a.mediaIds, reply_to: a.replyTo, created_at: a.createdAt };
}

export const WRITE_OPS: Ops = {
  createPost(store, a) {
    for (let i = 0; i < a.mediaIds.length; i++) {
      if (store.mediaOwner(a.mediaIds[i]) !== a.authorId) throw invalidField(`media_ids.${i}`, 'no such media uploaded by you');
    }
    const replyTo = a.replyTo === null ? null : BigInt(a.replyTo);
    let parentAuthor: string | null = null;
    if (replyTo !== null) {
      const parent = store.postAuthor(replyTo);
      if (!parent || parent.deleted_at !== null) throw invalidField('reply_to', 'no such post');
      parentAuthor = parent.author_id;
    }
    store.insertPost(BigInt(a.id), a.authorId, a.text, a.mediaIds, replyTo, a.createdAt);
    store.event('post_created', a.authorId, null, a.id, { reply_to: a.replyTo }, a.createdAt);
    if (replyTo !== null) {
      store.addReplyCount(replyTo, 1);
      store.event('reply', a.authorId, parentAuthor, a.replyTo, { reply_id: a.id }, a.createdAt);
    }
    return createdPost(a);
  },

  deletePost(store, a) {
    const id = BigInt(a.postId);
    const row = store.postAuthor(id);
    if (!row || row.deleted_at !== null) throw notFound('No such post.');
    if (row.author_id !== a.userId) throw forbidden('Only the author can delete a post.');
    store.softDelete(id, a.now);
    if (row.reply_to !== null) store.addReplyCount(BigInt(row.reply_to), -1);
    store.event('post_deleted', a.userId, null, a.postId, { reply_to: row.reply_to }, a.now);
  },

  like(store, a) {
    const id = BigInt(a.postId);
    const row = store.postAuthor(id);
    if (!row || row.deleted_at !== null) throw notFound('No such post.');
    if (store.like(id, a.userId, a.now)) store.event('like', a.userId, row.author_id, a.postId, {}, a.now);
  },

  unlike(store, a) {
    const id = BigInt(a.postId);
    const row = store.postAuthor(id);
    if (!row || row.deleted_at !== null) throw notFound('No such post.');
    if (store.unlike(id, a.userId)) store.event('unlike', a.userId, row.author_id, a.postId, {}, a.now);
  },

  follow(store, a) {
    if (store.follow(a.followerId, a.followeeId, BigInt(a.sinceId), a.now)) store.event('follow', a.followerId, a.followeeId, null, {}, a.now);
  },

  unfollow(store, a) {
    if (store.unfollow(a.followerId, a.followeeId)) store.event('unfollow', a.followerId, a.followeeId, null, {}, a.now);
  },

  insertMedia(store, a) {
    store.insertMedia(a.id, a.ownerId, a.contentType, a.size, a.now);
  },

  advanceConsumer(store, a) {
    store.advanceConsumer(a.name, a.seq, a.now);
  },

  indexAuthorPosts(store, a) {
    return store.indexAuthorPosts(a.now);
  },

  pruneOutbox(store, a) {
    return store.pruneEvents(OUTBOX_CONSUMERS, a.before, a.limit);
  },
};

/**
 * Operations that a run of consecutive calls can carry out together, with the same rows and
 * results as one call after another: `accepts` tells which calls qualify.
 */
export interface BulkOp<K extends WriteOpName> {
  accepts(args: WriteArgs[K]): boolean;
  run(store: SocialStore, args: Array<WriteArgs[K]>): Array<WriteResults[K]>;
}

export const BULK_WRITE_OPS: { [K in WriteOpName]?: BulkOp<K> } = {
  // A post without media or parent checks nothing in the store: createPost would only insert
  // its row and its event, which insertPlainPosts does for many posts per statement.
  createPost: {
    accepts: (a) => a.mediaIds.length === 0 && a.replyTo === null,
    run(store, list) {
      store.insertPlainPosts(list.map((a) => ({ id: BigInt(a.id), authorId: a.authorId, text: a.text, createdAt: a.createdAt })));
      return list.map(createdPost);
    },
  },
};
