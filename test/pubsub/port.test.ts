// The publish/subscribe port between threads: typed topics, delivery to every other port of the
// process (two ports in one thread stand in for two threads: a BroadcastChannel delivers to every
// other channel of its name), acknowledged publishing, and closing.
import t from 'tap';
import { ThreadPubSub, topic } from '../../src/pubsub/port';
import { setLogLevel } from '../../src/log';

// The warnings of the timeout and the failing handler are expected here.
setLogLevel('silent');

const greeting = topic<{ text: string }>('test.greeting');
const other = topic<{ n: number }>('test.other');
const nextTurn = () => new Promise((r) => setTimeout(r, 20));
/**
 * Waits (bounded) until `done` holds. A message between ports arrives on a later event-loop turn,
 * but not by any given time: after a stall of the process, a 20 ms timer can fire before it.
 */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !done() && Date.now() < deadline; ) await nextTurn();
}
/** publishAndWait's bound where every peer must answer: a guard against hanging, far above the 500 ms default. */
const ACK_MS = 10_000;

t.test('a message reaches the subscribers of its topic on the other ports, not its own', async (t) => {
  const a = new ThreadPubSub(1);
  const b = new ThreadPubSub(1);
  t.teardown(() => (a.close(), b.close()));
  const seenByA: string[] = [];
  const seenByB: string[] = [];
  const seenOther: number[] = [];
  a.subscribe(greeting, (m) => seenByA.push(m.text));
  b.subscribe(greeting, (m) => seenByB.push(m.text));
  b.subscribe(other, (m) => seenOther.push(m.n));
  a.publish(greeting, { text: 'hello' });
  await until(() => seenByB.length > 0);
  // A turn more for anything delivered wrongly beside it.
  await nextTurn();
  t.same(seenByB, ['hello'], 'the other port');
  t.same(seenByA, [], 'not the publisher itself');
  t.same(seenOther, [], 'not another topic');
});

t.test('publishAndWait resolves once every peer has handled the message', async (t) => {
  const a = new ThreadPubSub(2);
  const b = new ThreadPubSub(2);
  const c = new ThreadPubSub(2);
  t.teardown(() => (a.close(), b.close(), c.close()));
  const handled: string[] = [];
  b.subscribe(greeting, (m) => handled.push('b:' + m.text));
  c.subscribe(greeting, (m) => handled.push('c:' + m.text));
  t.equal(await a.publishAndWait(greeting, { text: 'x' }, ACK_MS), true);
  t.same(handled.sort(), ['b:x', 'c:x'], 'both handled it before the answer');
});

t.test('a peer that closed its port is not waited for, by messages pending or sent later', async (t) => {
  const a = new ThreadPubSub(2);
  const b = new ThreadPubSub(2);
  const c = new ThreadPubSub(2);
  t.teardown(() => (a.close(), b.close(), c.close()));
  let gate!: () => void;
  const opened = new Promise<void>((r) => (gate = r));
  b.subscribe(greeting, () => {});
  // c subscribes and leaves before answering: the pending message must not wait out its timeout.
  c.subscribe(greeting, () => {
    c.close();
    gate();
  });
  const started = Date.now();
  t.equal(await a.publishAndWait(greeting, { text: 'x' }, ACK_MS), true, 'b answered, c left');
  await opened;
  t.ok(Date.now() - started < ACK_MS / 2, 'without waiting out the timeout');
  t.equal(await a.publishAndWait(greeting, { text: 'y' }, ACK_MS), true, 'later messages wait for b alone');
  b.close();
  t.equal(await a.publishAndWait(greeting, { text: 'z' }, ACK_MS), true, 'and with every peer gone, for nobody');
});

t.test('a peer that answered and then left counts once', async (t) => {
  const a = new ThreadPubSub(2);
  const b = new ThreadPubSub(2);
  const c = new ThreadPubSub(2);
  t.teardown(() => (a.close(), b.close(), c.close()));
  b.subscribe(greeting, () => {});
  b.subscribe(other, () => {});
  c.subscribe(greeting, () => {});
  t.equal(await a.publishAndWait(greeting, { text: 'x' }, ACK_MS), true);
  b.close();
  // b left on both its channels: a counts it once, so c alone is waited for, and must answer.
  c.close();
  t.equal(await a.publishAndWait(greeting, { text: 'y' }, ACK_MS), true, 'both gone: nobody to wait for');
});

t.test('publishAndWait gives up after its timeout when a peer does not answer', async (t) => {
  const a = new ThreadPubSub(2);
  const b = new ThreadPubSub(2);
  t.teardown(() => (a.close(), b.close()));
  b.subscribe(greeting, () => {});
  t.equal(await a.publishAndWait(greeting, { text: 'x' }, 100), false, 'one of two peers answered');
});

t.test('a failing handler does not stop the others, nor the acknowledgement', async (t) => {
  const a = new ThreadPubSub(1);
  const b = new ThreadPubSub(1);
  t.teardown(() => (a.close(), b.close()));
  const handled: string[] = [];
  b.subscribe(greeting, () => {
    throw new Error('boom');
  });
  b.subscribe(greeting, (m) => handled.push(m.text));
  t.equal(await a.publishAndWait(greeting, { text: 'y' }, ACK_MS), true);
  t.same(handled, ['y']);
});

t.test('with no peers, publishAndWait answers at once; after close nothing is delivered', async (t) => {
  const alone = new ThreadPubSub(0);
  t.equal(await alone.publishAndWait(greeting, { text: 'z' }), true);
  alone.close();
  const a = new ThreadPubSub(1);
  const b = new ThreadPubSub(1);
  t.teardown(() => a.close());
  const seen: string[] = [];
  const unsubscribe = b.subscribe(greeting, (m) => seen.push(m.text));
  unsubscribe();
  a.publish(greeting, { text: 'after unsubscribe' });
  await nextTurn();
  b.close();
  a.publish(greeting, { text: 'after close' });
  await nextTurn();
  t.same(seen, []);
});
