// The timeline reader's incremental outbox tail: after any sequence of commits and fan-out
// position moves, it must hold exactly what a full read of the tail would.
import t from 'tap';
import { UnfannedPosts } from '../../src/social/unfanned-posts';
import type { UnfannedPost } from '../../src/social/store';

/** An outbox of post_created events and a fan-out position, answering as the store does. */
class FakeOutbox {
  events: UnfannedPost[] = [];
  position = 0;
  reads: number[] = [];
  readAfter = (seq: number) => {
    this.reads.push(seq);
    const from = Math.max(seq, this.position);
    return { position: this.position, posts: this.events.filter(([s]) => s > from) };
  };
  /** What a full read of the tail says: each author's ids after the position, newest first. */
  expected(after: bigint, before: bigint): Map<string, bigint[]> {
    const out = new Map<string, bigint[]>();
    for (const [seq, author, id] of this.events) {
      if (seq <= this.position || id <= after || id >= before) continue;
      out.set(author, [...(out.get(author) ?? []), id]);
    }
    for (const ids of out.values()) ids.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    return out;
  }
}

/** Posts held, over all authors. */
function heldCount(tail: UnfannedPosts): number {
  let n = 0;
  for (const ids of held(tail).values()) n += ids.length;
  return n;
}

function held(tail: UnfannedPosts, after = 0n, before = 1n << 63n): Map<string, bigint[]> {
  const out = new Map<string, bigint[]>();
  for (const author of tail.authors()) {
    const ids = tail.idsBetween(author, after, before);
    if (ids.length > 0) out.set(author, ids);
  }
  return out;
}

t.test('reads only the new events, and drops what the fan-out passed', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 100n], [2, 'b', 101n], [3, 'a', 102n]);
  tail.refresh(outbox.readAfter);
  t.same(held(tail), new Map([['a', [102n, 100n]], ['b', [101n]]]));
  t.equal(heldCount(tail), 3);

  outbox.events.push([5, 'b', 103n]); // event 4 was a like: not a post
  outbox.position = 2;
  tail.refresh(outbox.readAfter);
  t.same(outbox.reads, [0, 3], 'the second read starts after the newest event seen');
  t.same(held(tail), new Map([['a', [102n]], ['b', [103n]]]), 'posts at or below the position are gone');

  outbox.position = 9; // the fan-out passed everything, and events 6 to 9 were no posts
  tail.refresh(outbox.readAfter);
  t.same(held(tail), new Map(), 'an author with nothing left is dropped');
  t.equal(heldCount(tail), 0);
  outbox.events.push([10, 'c', 104n]);
  tail.refresh(outbox.readAfter);
  t.same(outbox.reads.at(-1), 9, 'reads resume after the position');
  t.same(held(tail), new Map([['c', [104n]]]));
  t.same(tail.idsBetween('c', 104n, 200n), [], 'bounds are exclusive');
  t.same(tail.idsBetween('c', 103n, 104n), []);
  t.same(tail.idsBetween('nobody', 0n, 200n), []);
});

t.test('ids committed out of order (several HTTP threads) still come out newest first', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 200n], [2, 'a', 150n], [3, 'a', 300n]);
  tail.refresh(outbox.readAfter);
  t.same(tail.idsBetween('a', 0n, 1000n), [300n, 200n, 150n]);
  t.same(tail.idsBetween('a', 150n, 300n), [200n]);
  outbox.position = 1;
  tail.refresh(outbox.readAfter);
  t.same(tail.idsBetween('a', 0n, 1000n), [300n, 150n], 'dropped by commit order, not by id');
  t.same(tail.idsBetween('a', 0n, 1000n, 1), [300n], 'the newest first, up to the limit');
});

t.test('a limit takes the newest ids below the upper bound', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 100n], [2, 'a', 101n], [3, 'a', 102n], [4, 'a', 103n], [5, 'a', 104n]);
  tail.refresh(outbox.readAfter);
  t.same(tail.idsBetween('a', 0n, 1000n, 2), [104n, 103n]);
  t.same(tail.idsBetween('a', 0n, 104n, 2), [103n, 102n]);
  t.same(tail.idsBetween('a', 101n, 104n, 5), [103n, 102n]);
  t.same(tail.idsBetween('a', 0n, 1000n, 0), []);
});

t.test('randomised: always the same as a full read of the tail', async (t) => {
  let seed = 12345;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let run = 0; run < 20; run++) {
    const outbox = new FakeOutbox();
    const tail = new UnfannedPosts();
    let seq = 0;
    let id = 1000n;
    for (let step = 0; step < 200; step++) {
      const what = random(10);
      if (what < 6) {
        // A group commit of a few events, some of them posts, ids mostly ascending.
        for (let k = random(5); k > 0; k--) {
          seq++;
          if (random(3) > 0) outbox.events.push([seq, 'u' + random(6), (id += BigInt(1 + random(3))) - BigInt(random(4))]);
        }
      } else if (what < 8) {
        outbox.position = Math.min(seq, outbox.position + random(8));
      } else {
        tail.refresh(outbox.readAfter);
        const after = BigInt(random(Number(id - 990n))) + 990n;
        const before = after + BigInt(random(40));
        const want = outbox.expected(after, before);
        if (JSON.stringify([...held(tail, after, before)].map(([a, ids]) => [a, ids.map(String)]).sort()) !==
          JSON.stringify([...want].map(([a, ids]) => [a, ids.map(String)]).sort())) {
          t.fail(`run ${run} step ${step}: the tail differs from a full read`);
          return;
        }
      }
    }
    tail.refresh(outbox.readAfter);
    t.same(held(tail), outbox.expected(0n, 1n << 63n), `run ${run}: the same posts as a full read`);
  }
});
