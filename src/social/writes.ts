// The durable writes of the microblog as named operations on plain data, run by the server's
// writer inside its group transactions (writer/). HTTP threads validate what they can alone,
// then send the operation's name and arguments; checks made here, inside the transaction, are the
// authoritative ones: they see every earlier commit. Each write appends the outbox event that
// background work (fan-out, and whatever else consumes the outbox) reacts to, in the same
// transaction.
import type { Sqlite } from '../store/sqlite';
import { forbidden, invalidField, notFound } from '../http/errors';
import { MediaStore } from '../media/store';
import { SocialStore, type Post } from './store';

export interface CreatePost {
  id: string;
  authorId: string;
  text: string;
  mediaIds: string[];
  replyTo: string | null;
  createdAt: string;
}

/** What a createPost answers: the post as stored. */
export function createdPost(a: CreatePost): Post {
  return { id: a.id, text: a.text, author_id: a.authorId, media_ids: a.mediaIds, reply_to: a.replyTo, created_at: a.createdAt };
}

export function socialWrites(db: Sqlite) {
  const store = new SocialStore(db);
  const media = new MediaStore(db);
  return {
    createPost: {
      run(a: CreatePost): Post {
        for (let i = 0; i < a.mediaIds.length; i++) {
          if (media.owner(a.mediaIds[i]) !== a.authorId) throw invalidField(`media_ids.${i}`, 'no such media uploaded by you');
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
      // A post without media or parent checks nothing in the store: createPost would only insert
      // its row and its event, which insertPlainPosts does for many posts per statement.
      bulk: {
        accepts: (a: CreatePost) => a.mediaIds.length === 0 && a.replyTo === null,
        run(list: CreatePost[]): Post[] {
          store.insertPlainPosts(list);
          return list.map(createdPost);
        },
      },
    },

    deletePost(a: { userId: string; postId: string; now: string }): void {
      const id = BigInt(a.postId);
      const row = store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      if (row.author_id !== a.userId) throw forbidden('Only the author can delete a post.');
      store.softDelete(id, a.now);
      if (row.reply_to !== null) store.addReplyCount(BigInt(row.reply_to), -1);
      store.event('post_deleted', a.userId, null, a.postId, { reply_to: row.reply_to }, a.now);
    },

    like(a: { userId: string; postId: string; now: string }): void {
      const id = BigInt(a.postId);
      const row = store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      if (store.like(id, a.userId, a.now)) store.event('like', a.userId, row.author_id, a.postId, {}, a.now);
    },

    unlike(a: { userId: string; postId: string; now: string }): void {
      const id = BigInt(a.postId);
      const row = store.postAuthor(id);
      if (!row || row.deleted_at !== null) throw notFound('No such post.');
      if (store.unlike(id, a.userId)) store.event('unlike', a.userId, row.author_id, a.postId, {}, a.now);
    },

    follow(a: { followerId: string; followeeId: string; sinceId: string; now: string }): void {
      if (store.follow(a.followerId, a.followeeId, BigInt(a.sinceId), a.now)) store.event('follow', a.followerId, a.followeeId, null, {}, a.now);
    },

    unfollow(a: { followerId: string; followeeId: string; now: string }): void {
      if (store.unfollow(a.followerId, a.followeeId)) store.event('unfollow', a.followerId, a.followeeId, null, {}, a.now);
    },

    /** Files the posts created since the last filing under their authors (the writer's job, module.ts). */
    indexAuthorPosts(a: { now: string }): number {
      return store.indexAuthorPosts(a.now);
    },
  };
}

export type SocialWrites = ReturnType<typeof socialWrites>;
