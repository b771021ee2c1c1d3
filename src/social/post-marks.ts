// Who has posted lately, in memory every HTTP thread shares: a bank of counters (server/signals.ts),
// a slot per hash of the author's id, raised once a post is durable and before its 201 is sent.
// A timeline reader that keeps a reader's page for a moment (timeline.ts) makes it again as soon
// as the reader's slot moved, so one's own post is in one's next read on whichever thread serves
// it. Authors that share a slot only make each other's pages again sooner.

/** The bank's name and size: a power of two, 16 KiB of int32 slots. */
export const POST_MARKS = 'social.post-marks';
export const POST_MARK_SLOTS = 4096;

export class PostMarks {
  private readonly mask: number;

  constructor(private readonly bank: Int32Array) {
    if (bank.length === 0 || (bank.length & (bank.length - 1)) !== 0) throw new Error('the bank of post marks needs a power of two of slots');
    this.mask = bank.length - 1;
  }

  /** A post of `authorId` is durable: called before it is answered. */
  posted(authorId: string): void {
    Atomics.add(this.bank, slotOf(authorId) & this.mask, 1);
  }

  /** The mark of `authorId`'s slot: it moves whenever they (or an author sharing it) post. */
  of(authorId: string): number {
    return Atomics.load(this.bank, slotOf(authorId) & this.mask);
  }
}

/** FNV-1a over the id's characters: ids are decimal strings, whose last digits move most. */
export function slotOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Marks in a bank of their own, for a reader that no other thread shares (tests). */
export function localPostMarks(slots = POST_MARK_SLOTS): PostMarks {
  return new PostMarks(new Int32Array(new SharedArrayBuffer(slots * Int32Array.BYTES_PER_ELEMENT)));
}
