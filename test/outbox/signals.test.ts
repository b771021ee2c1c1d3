// The writer's outbox signals: "outbox" moves with any event; a position that reads only some
// types and waits for them has a signal of its own that moves only with those, so that posts
// alone never wake the notification generation or delivery.
import t from 'tap';
import { addUsers, commitAll, groupCommit, tempStore } from '../helpers/store';
import { CAPABILITIES, signalLayout } from '../../src/capabilities';
import { OUTBOX_SIGNAL, outboxSignal } from '../../src/outbox/module';
import { GENERATION_POSITION, DELIVERY_CONSUMER } from '../../src/notifications/store';
import { FANOUT_CONSUMER } from '../../src/social/store';

const ALICE = '1001';
const BOB = '1002';
const now = '2026-01-02T00:00:00.000Z';

t.test('the layout has the outbox signal and one per position that waits for its types', async (t) => {
  const names = signalLayout().map(([name]) => name);
  t.ok(names.includes(OUTBOX_SIGNAL));
  t.ok(names.includes(outboxSignal(GENERATION_POSITION)), 'the notification generation');
  t.ok(names.includes(outboxSignal(DELIVERY_CONSUMER)), 'the delivery consumer (it reads notification events only)');
  t.notOk(names.includes(outboxSignal(FANOUT_CONSUMER)), 'not the fan-out, which reads every event');
});

t.test('a typed signal moves only when a committed group appended one of its types', async (t) => {
  const { db } = tempStore(t, 'perch-outbox-signals-');
  addUsers(db, { [ALICE]: 'alice', [BOB]: 'bob' });
  const group = groupCommit(db);
  const outbox = CAPABILITIES.find((c) => c.name === 'outbox')!;
  const signals = outbox.writerSignals!(db);
  const moved = () => Object.fromEntries(signals.map((s) => [s.name, s.moved()]));
  const any = OUTBOX_SIGNAL;
  const actions = outboxSignal(GENERATION_POSITION);
  const deliveries = outboxSignal(DELIVERY_CONSUMER);

  t.same(moved(), { [any]: false, [actions]: false, [deliveries]: false }, 'nothing appended yet');
  commitAll(group, [['createPost', { id: '500', authorId: ALICE, text: 'hello', mediaIds: [], replyTo: null, createdAt: now }]]);
  t.same(moved(), { [any]: true, [actions]: false, [deliveries]: false }, 'a post moves only the outbox signal');
  t.same(moved(), { [any]: false, [actions]: false, [deliveries]: false }, 'asking resets them');
  commitAll(group, [['like', { userId: BOB, postId: '500', now }]]);
  t.same(moved(), { [any]: true, [actions]: true, [deliveries]: false }, "a like moves the generation's");
  commitAll(group, [['generateNotifications', { limit: 100, windowMs: 60_000, now }]]);
  t.same(moved(), { [any]: true, [actions]: false, [deliveries]: true }, "the notification it made moves the delivery's");
});
