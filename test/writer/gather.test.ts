// The gathering rule (gather.ts): a small group waits for more writes only while several were in
// flight at once lately, and never longer than the window from its first write's arrival.
import t from 'tap';
import { Gathering, type GatherPolicy } from '../../src/writer/gather';

const policy: GatherPolicy = { windowMs: 5, target: 8, minInFlight: 3, memoryMs: 100 };
/** A sync's time lately, in ms. */
const SYNC_MS = 1;

t.test('a client writing one at a time never waits', async (t) => {
  const g = new Gathering(policy);
  let waits = 0;
  for (let now = 0; now < 1000; now += 1) {
    g.arrived(now, 1);
    if (g.waitMs(now, 1, now, SYNC_MS) > 0) waits++;
  }
  t.equal(waits, 0, 'a thousand writes, none held back');
  t.equal(g.concurrency(1000), 1);
});

t.test('two clients taking turns never wait either', async (t) => {
  const g = new Gathering(policy);
  g.arrived(0, 1);
  g.arrived(0.5, 2);
  t.equal(g.concurrency(1), 2);
  t.equal(g.waitMs(1, 1, 0.5, SYNC_MS), 0);
});

t.test('once several writes were in flight, a small group waits out the rest of the window', async (t) => {
  const g = new Gathering(policy);
  g.arrived(10, 1);
  g.arrived(10.5, 2);
  g.arrived(11, 3);
  t.equal(g.concurrency(11), 3);
  t.equal(g.waitMs(20, 1, 20, SYNC_MS), 5, 'a group of one just begun waits the whole window');
  t.equal(g.waitMs(22, 1, 20, SYNC_MS), 3, 'the window counts from the first write');
  t.equal(g.waitMs(26, 2, 20, SYNC_MS), 0, 'and not past it');
  t.equal(g.waitMs(21, 0, 21, SYNC_MS), 0, 'a group of no requested writes (the writer\'s own jobs) never waits');
});

t.test('a group commits at once when it holds as many writes as were in flight, or the target', async (t) => {
  const g = new Gathering(policy);
  for (let i = 1; i <= 4; i++) g.arrived(i, i);
  t.equal(g.waitMs(5, 3, 5, SYNC_MS), 5);
  t.equal(g.waitMs(5, 4, 5, SYNC_MS), 0, 'all four that were in flight are here');
  for (let i = 5; i <= 20; i++) g.arrived(i, i);
  t.equal(g.waitMs(21, 7, 21, SYNC_MS), 5);
  t.equal(g.waitMs(21, 8, 21, SYNC_MS), 0, 'the target');
});

t.test('what was in flight is forgotten after one to two spans', async (t) => {
  const g = new Gathering(policy);
  g.arrived(0, 5);
  t.equal(g.concurrency(99), 5, 'within the span');
  g.arrived(150, 1);
  t.equal(g.concurrency(150), 5, 'the span before is still remembered');
  t.equal(g.concurrency(260), 1, 'a span later only the last one');
  t.equal(g.waitMs(260, 1, 260, SYNC_MS), 0);
  t.equal(g.concurrency(400), 0, 'two spans later nothing');
  g.arrived(400, 1);
  t.equal(g.concurrency(401), 1, 'a span that ended long ago is not carried over');
});

t.test('writes that come so fast that a group fills during a sync are not gathered', async (t) => {
  const g = new Gathering(policy);
  // Twenty writes a millisecond for 250 ms, hundreds in flight.
  for (let i = 0; i < 5000; i++) g.arrived(i / 20, Math.min(256, i + 1));
  t.ok(Math.abs(g.ratePerMs(250) - 20) < 1, `twenty a millisecond over the spans remembered (${g.ratePerMs(250).toFixed(1)})`);
  t.equal(g.waitMs(250, 3, 249.5, 1), 0, 'a 1 ms sync brings more than a group: commit now');
  t.equal(g.waitMs(250, 3, 249.5, 0.1), 4.5, 'a sync of a tenth of that would not: wait');
  t.equal(g.ratePerMs(600), 0, 'forgotten two spans later');
});
