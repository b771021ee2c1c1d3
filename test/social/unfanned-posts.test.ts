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

/** The authors the tests' outboxes post as. */
const AUTHORS = ['a', 'b', 'c', 'u0', 'u1', 'u2', 'u3', 'u4', 'u5'];

/** What the tail answers for each author alone, as a map like FakeOutbox.expected's. */
function held(tail: UnfannedPosts, after = 0n, before = 1n << 63n): Map<string, bigint[]> {
  const out = new Map<string, bigint[]>();
  for (const author of AUTHORS) {
    const ids = of(tail, [author], after, before);
    if (ids.length > 0) out.set(author, ids);
  }
  return out;
}

/** The tail's answer for a reader who follows `authors`. */
function of(tail: UnfannedPosts, authors: string[], after: bigint, before: bigint, limit = 1_000_000): bigint[] {
  return tail.newestFollowed(new Map(authors.map((a) => [a, true])), after, before, limit);
}

t.test('reads only the new events, and drops what the fan-out passed', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 100n], [2, 'b', 101n], [3, 'a', 102n]);
  tail.refresh(outbox.readAfter);
  t.same(held(tail), new Map([['a', [102n, 100n]], ['b', [101n]]]));
  t.equal(tail.size, 3);

  outbox.events.push([5, 'b', 103n]); // event 4 was a like: not a post
  outbox.position = 2;
  tail.refresh(outbox.readAfter);
  t.same(outbox.reads, [0, 3], 'the second read starts after the newest event seen');
  t.same(held(tail), new Map([['a', [102n]], ['b', [103n]]]), 'posts at or below the position are gone');

  outbox.position = 9; // the fan-out passed everything, and events 6 to 9 were no posts
  tail.refresh(outbox.readAfter);
  t.same(held(tail), new Map(), 'an author with nothing left is dropped');
  t.equal(tail.size, 0);
  outbox.events.push([10, 'c', 104n]);
  tail.refresh(outbox.readAfter);
  t.same(outbox.reads.at(-1), 9, 'reads resume after the position');
  t.same(held(tail), new Map([['c', [104n]]]));
  t.same(of(tail, ['c'], 104n, 200n), [], 'bounds are exclusive');
  t.same(of(tail, ['c'], 103n, 104n), []);
  t.same(of(tail, ['nobody'], 0n, 200n), []);
});

t.test('ids committed out of order (several HTTP threads) still come out newest first', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 200n], [2, 'a', 150n], [3, 'a', 300n]);
  tail.refresh(outbox.readAfter);
  t.same(of(tail, ['a'], 0n, 1000n), [300n, 200n, 150n]);
  t.same(of(tail, ['a'], 150n, 300n), [200n]);
  outbox.position = 1;
  tail.refresh(outbox.readAfter);
  t.same(of(tail, ['a'], 0n, 1000n), [300n, 150n], 'dropped by commit order, not by id');
  t.same(of(tail, ['a'], 0n, 1000n, 1), [300n], 'the newest first, up to the limit');
});

t.test('a limit takes the newest ids below the upper bound', async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  outbox.events.push([1, 'a', 100n], [2, 'a', 101n], [3, 'a', 102n], [4, 'a', 103n], [5, 'a', 104n]);
  tail.refresh(outbox.readAfter);
  t.same(of(tail, ['a'], 0n, 1000n, 2), [104n, 103n]);
  t.same(of(tail, ['a'], 0n, 104n, 2), [103n, 102n]);
  t.same(of(tail, ['a'], 101n, 104n, 5), [103n, 102n]);
  t.same(of(tail, ['a'], 0n, 1000n, 0), []);
});

t.test("a reader's followed authors, merged newest first, whichever share of the tail they hold", async (t) => {
  const outbox = new FakeOutbox();
  const tail = new UnfannedPosts();
  // Six authors posting in turn: ids 100 to 123, author u(i % 6).
  for (let i = 0; i < 24; i++) outbox.events.push([i + 1, 'u' + (i % 6), BigInt(100 + i)]);
  tail.refresh(outbox.readAfter);
  t.same(of(tail, AUTHORS, 0n, 1000n, 5), [123n, 122n, 121n, 120n, 119n], 'everyone followed: the newest of the whole tail');
  t.same(of(tail, ['u0', 'u3'], 0n, 1000n, 5), [121n, 118n, 115n, 112n, 109n], 'two of six (a third of the tail)');
  t.same(of(tail, ['u5'], 0n, 1000n, 3), [123n, 117n, 111n], 'one of six (a sixth of the tail)');
  t.same(of(tail, ['u1', 'u2'], 106n, 120n), [119n, 114n, 113n, 108n, 107n], 'between the bounds, both exclusive');
  t.same(of(tail, ['nobody'], 0n, 1000n), [], 'no followed author posting: nothing');
  t.same(of(tail, ['u1', 'nobody', 'u2', 'x', 'y', 'z', 'w'], 0n, 1000n, 2), [120n, 119n], 'more followed than posting');
  outbox.position = 20;
  tail.refresh(outbox.readAfter);
  t.equal(tail.size, 4, 'the posts after the position');
  t.same(of(tail, AUTHORS, 0n, 1000n), [123n, 122n, 121n, 120n], 'what the fan-out passed is gone from both lists');
  t.same(of(tail, ['u0'], 0n, 1000n), [], 'u0 posted ids 100, 106, 112 and 118, all passed');
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
        // A reader following some of the authors, with a limit: their posts merged, newest first.
        const followed = AUTHORS.filter(() => random(2) === 0);
        const limit = 1 + random(6);
        const merged = followed.flatMap((a) => want.get(a) ?? []).sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)).slice(0, limit);
        if (of(tail, followed, after, before, limit).join() !== merged.join()) {
          t.fail(`run ${run} step ${step}: the followed authors' newest differ from a full read`);
          return;
        }
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
