// The writer client's ring of writes waiting for their answers (src/writer/client.ts).
import t from 'tap';
import { WaitingWrites } from '../../src/writer/client';

/** A ring, and what each write it holds was settled with, by number. */
function ring() {
  const w = new WaitingWrites();
  const settled = new Map<number, string>();
  const add = () => {
    const n: number = w.add(
      (v) => settled.set(n, `ok ${String(v)}`),
      (e) => settled.set(n, `err ${String(e)}`),
    );
    return n;
  };
  return { w, settled, add };
}

t.test('writes are numbered in order and settled once each, in any order', async (t) => {
  const { w, settled, add } = ring();
  const ns = [add(), add(), add()];
  t.same(ns, [1, 2, 3]);
  t.equal(w.size, 3);
  w.settle(2, true, 'b');
  w.settle(3, false, 'c');
  w.settle(2, true, 'again');
  w.settle(1, true, 'a');
  t.same([...settled].sort(), [[1, 'ok a'], [2, 'ok b'], [3, 'err c']], 'a second answer to 2 changes nothing');
  t.equal(w.size, 0);
  w.settle(4, true, 'not handed out');
  w.settle(0, true, 'never');
  t.equal(settled.size, 3, 'numbers never handed out are ignored');
});

t.test('the ring grows past its first size while an old write still waits, and keeps every write', async (t) => {
  const { w, settled, add } = ring();
  const first = add();
  const later: number[] = [];
  for (let i = 0; i < 500; i++) later.push(add());
  // Answer all but the first, newest first, then the first.
  for (const n of [...later].reverse()) w.settle(n, true, n);
  t.equal(w.size, 1, 'only the first waits');
  w.settle(first, true, first);
  t.equal(settled.size, 501);
  t.ok([...settled].every(([n, s]) => s === `ok ${n}`), 'each with its own answer');
  // After a long run of answered writes the ring still takes and answers new ones.
  const n = add();
  t.equal(n, 502);
  w.settle(n, true, 'x');
  t.equal(settled.get(502), 'ok x');
});

t.test('rejectAll rejects every waiting write, oldest first, and leaves the answered alone', async (t) => {
  const { w, settled, add } = ring();
  for (let i = 0; i < 100; i++) add();
  w.settle(50, true, 'kept');
  const order: number[] = [];
  const seen = new Map(settled);
  w.rejectAll('gone');
  for (const [n] of settled) if (!seen.has(n)) order.push(n);
  t.equal(order.length, 99);
  t.same(order, [...order].sort((a, b) => a - b), 'oldest first');
  t.equal(settled.get(50), 'ok kept');
  t.equal(settled.get(1), 'err gone');
  t.equal(w.size, 0);
});
