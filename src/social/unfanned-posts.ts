// The posts the fan-out has not reached yet, as one HTTP thread's timeline reader knows them: the
// post_created events after the fan-out's position, by author. Kept up to date incrementally: each
// refresh reads only the events committed since the last one and drops those the fan-out has
// passed, so under a post load (the tail then holds up to a fan-out gap's worth of posts, some
// thousands) a read after each commit costs the new rows, not the whole tail again.
import type { UnfannedPost } from './store';

/** One author's unfanned posts in commit order, which is id order unless `ascending` says not. */
interface AuthorTail {
  seqs: number[];
  ids: bigint[];
  /**
   * Ids ascend with the sequence numbers. Always so with one HTTP thread (ids are minted in the
   * order the writer commits them); with several, a thread's later-minted id can commit first.
   */
  ascending: boolean;
}

export class UnfannedPosts {
  /** The fan-out's position last applied: every event up to it is in the home timelines. */
  private position = 0;
  /** The newest event read: everything up to it is known. */
  private read = 0;
  private readonly byAuthor = new Map<string, AuthorTail>();

  /**
   * Brings the tail up to date: `readAfter(seq)` answers the fan-out's position and the posts
   * created after both `seq` and that position, in commit order (SocialStore.unfannedPostsAfter).
   */
  refresh(readAfter: (seq: number) => { position: number; posts: UnfannedPost[] }): void {
    const { position, posts } = readAfter(this.read);
    if (position > this.position) {
      this.position = position;
      this.dropUpTo(position);
    }
    if (position > this.read) this.read = position;
    for (const [seq, authorId, id] of posts) {
      this.read = seq;
      const tail = this.byAuthor.get(authorId);
      if (!tail) {
        this.byAuthor.set(authorId, { seqs: [seq], ids: [id], ascending: true });
        continue;
      }
      if (id < tail.ids[tail.ids.length - 1]) tail.ascending = false;
      tail.seqs.push(seq);
      tail.ids.push(id);
    }
  }

  /** Authors with unfanned posts. */
  authors(): IterableIterator<string> {
    return this.byAuthor.keys();
  }

  /**
   * An author's unfanned post ids in (after, before), newest first, at most `limit` of them: under
   * a post load the tail holds a fan-out gap's worth of posts, and a page needs a few.
   */
  idsBetween(authorId: string, after: bigint, before: bigint, limit = Infinity): bigint[] {
    const tail = this.byAuthor.get(authorId);
    if (!tail) return [];
    const out: bigint[] = [];
    const ids = tail.ids;
    if (tail.ascending) {
      for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
        const id = ids[i];
        if (id <= after) break;
        if (id < before) out.push(id);
      }
      return out;
    }
    for (let i = ids.length - 1; i >= 0; i--) {
      const id = ids[i];
      if (id > after && id < before) out.push(id);
    }
    out.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    return out.length > limit ? out.slice(0, limit) : out;
  }

  private dropUpTo(position: number): void {
    for (const [authorId, tail] of this.byAuthor) {
      // In commit order, so the fanned-out ones are a prefix.
      let n = 0;
      while (n < tail.seqs.length && tail.seqs[n] <= position) n++;
      if (n === 0) continue;
      if (n === tail.seqs.length) {
        this.byAuthor.delete(authorId);
        continue;
      }
      tail.seqs.splice(0, n);
      tail.ids.splice(0, n);
    }
  }
}
