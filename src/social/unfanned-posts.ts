// The posts the fan-out has not reached yet, as one HTTP thread's timeline reader knows them: the
// post_created events after the fan-out's position. Kept up to date incrementally: each refresh
// reads only the events committed since the last one and drops those the fan-out has passed, so
// under a post load (the tail then holds up to a fan-out gap's worth of posts, some thousands) a
// read after each commit costs the new rows, not the whole tail again.
//
// A page needs the newest few of these posts by the authors its reader follows. They are kept
// twice: all of them in one list in id order, which a page walks from its upper bound, skipping
// authors not followed; and by author, which a page merges when its reader follows few of the
// authors in the tail (the walk would then skip most of what it visits). Under a post load every
// author the reader follows has a tail, and merging a list per author on every read cost more
// than the rest of the read (bench/HISTORY.md, "Timeline reads beside posts: one walk").
import { mergeNewestFirst } from '../core/timeline-merge';
import type { UnfannedPost } from './store';

/** One author's unfanned posts in commit order, which is id order unless `ascending` says not. */
interface AuthorTail {
  /** The author's id, one string shared by every entry of the combined list. */
  author: string;
  seqs: number[];
  ids: bigint[];
  /**
   * Ids ascend with the sequence numbers. Always so with one HTTP thread (ids are minted in the
   * order the writer commits them); with several, a thread's later-minted id can commit first.
   */
  ascending: boolean;
}

/**
 * Walk the combined list when the followed authors hold at least this share of the tail: the
 * walk then visits at most about 1/share entries per id it returns.
 */
const WALK_SHARE = 1 / 4;

export class UnfannedPosts {
  /** The fan-out's position last applied: every event up to it is in the home timelines. */
  private position = 0;
  /** The newest event read: everything up to it is known. */
  private read = 0;
  private readonly byAuthor = new Map<string, AuthorTail>();
  /** Every unfanned post in ascending id order: its id, author and sequence number. */
  private ids: bigint[] = [];
  private authorOf: string[] = [];
  private seqs: number[] = [];

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
      let tail = this.byAuthor.get(authorId);
      if (!tail) {
        tail = { author: authorId, seqs: [seq], ids: [id], ascending: true };
        this.byAuthor.set(authorId, tail);
      } else {
        if (id < tail.ids[tail.ids.length - 1]) tail.ascending = false;
        tail.seqs.push(seq);
        tail.ids.push(id);
      }
      this.insert(id, tail.author, seq);
    }
  }

  /** Posts held, over all authors. */
  get size(): number {
    return this.ids.length;
  }

  /**
   * The unfanned post ids in (after, before) by the authors in `followed`, newest first, at most
   * `limit` of them: under a post load the tail holds a fan-out gap's worth of posts, and a page
   * needs a few.
   */
  newestFollowed(followed: ReadonlyMap<string, unknown>, after: bigint, before: bigint, limit: number): bigint[] {
    // Whichever of the two is smaller is iterated to count what the followed authors hold.
    const tails: AuthorTail[] = [];
    let held = 0;
    if (followed.size < this.byAuthor.size) {
      for (const author of followed.keys()) {
        const tail = this.byAuthor.get(author);
        if (tail) {
          tails.push(tail);
          held += tail.ids.length;
        }
      }
    } else {
      for (const tail of this.byAuthor.values()) {
        if (followed.has(tail.author)) {
          tails.push(tail);
          held += tail.ids.length;
        }
      }
    }
    if (held === 0 || limit <= 0) return [];
    if (held >= this.ids.length * WALK_SHARE) return this.walk(followed, after, before, limit);
    if (tails.length === 1) return idsIn(tails[0], after, before, limit);
    return mergeNewestFirst(
      tails.map((tail) => idsIn(tail, after, before, limit)),
      limit,
    );
  }

  /** The combined list from `before` down, skipping authors not followed. */
  private walk(followed: ReadonlyMap<string, unknown>, after: bigint, before: bigint, limit: number): bigint[] {
    const ids = this.ids;
    const authorOf = this.authorOf;
    const out: bigint[] = [];
    for (let i = lowerBound(ids, before) - 1; i >= 0 && out.length < limit; i--) {
      const id = ids[i];
      if (id <= after) break;
      if (followed.has(authorOf[i])) out.push(id);
    }
    return out;
  }

  /** Adds a post to the combined list, in id order (at the end unless ids were committed out of order). */
  private insert(id: bigint, author: string, seq: number): void {
    const ids = this.ids;
    if (ids.length === 0 || id > ids[ids.length - 1]) {
      ids.push(id);
      this.authorOf.push(author);
      this.seqs.push(seq);
      return;
    }
    const at = lowerBound(ids, id);
    ids.splice(at, 0, id);
    this.authorOf.splice(at, 0, author);
    this.seqs.splice(at, 0, seq);
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
    // The combined list is in id order, which is not quite commit order with several HTTP threads:
    // one pass keeps what the position has not passed.
    const { ids, authorOf, seqs } = this;
    let kept = 0;
    for (let i = 0; i < ids.length; i++) {
      if (seqs[i] <= position) continue;
      ids[kept] = ids[i];
      authorOf[kept] = authorOf[i];
      seqs[kept] = seqs[i];
      kept++;
    }
    ids.length = kept;
    authorOf.length = kept;
    seqs.length = kept;
  }
}

/** An author's unfanned post ids in (after, before), newest first, at most `limit`. */
function idsIn(tail: AuthorTail, after: bigint, before: bigint, limit: number): bigint[] {
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

/** The first index of ascending `ids` whose id is at least `id` (ids.length when none is). */
function lowerBound(ids: readonly bigint[], id: bigint): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
