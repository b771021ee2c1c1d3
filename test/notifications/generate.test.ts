import t from 'tap';
import { addUsers, tempStore } from '../helpers/store';
import { outboxOf } from '../../src/outbox/store';
import { generateNotifications } from '../../src/notifications/generate';
import { NotificationStore } from '../../src/notifications/store';

const AT = '2026-11-22T13:00:00.000Z';
const HOUR = 3_600_000;

function setup(t: Parameters<typeof tempStore>[0]) {
  const { db } = tempStore(t, 'perch-generate-');
  addUsers(db, { '1': 'ann', '2': 'ben', '3': 'cid' });
  db.prepare("INSERT INTO posts (id, author_id, text, created_at) VALUES (100, '1', 'p', ?)").run(AT);
  const store = new NotificationStore(db);
  const outbox = outboxOf(db);
  const append = (type: string, actorId: string, recipientId: string | null, postId: string | null, createdAt = AT) =>
    outbox.append({ type, actorId, recipientId, postId, payload: '{}', createdAt });
  const run = (limit = 500) => db.transaction(() => generateNotifications(store, { limit, windowMs: HOUR, now: AT }))();
  return { db, store, append, run };
}

t.test('one run applies the actions, appends a delivery event per changed row, and moves the position', async (t) => {
  const { db, store, append, run } = setup(t);
  append('like', '2', '1', '100');
  append('post_created', '3', null, '101');
  append('like', '3', '1', '100', '2026-11-22T13:00:01.000Z');
  append('like', '1', '1', '100');
  append('follow', '2', '1', null);
  t.same(run(), { upTo: 5, more: false, changed: 2 });
  const page = store.page('1', null, 10);
  t.same(page.items.map((n) => [n.type, n.actor_ids, n.actor_count, n.post_id, n.created_at, n.updated_at]), [
    ['follow', ['2'], 1, null, '2026-11-22T13:00:01.000Z', '2026-11-22T13:00:01.000Z'],
    ['like', ['3', '2'], 2, '100', AT, '2026-11-22T13:00:01.000Z'],
  ], 'the follow, acted at 13:00:00, is stamped no earlier than the like before it');
  const deliveries = db.prepare("SELECT recipient_id, payload FROM events WHERE type = 'notification' ORDER BY seq").all();
  t.same(deliveries, [{ recipient_id: '1', payload: '{"id":"1"}' }, { recipient_id: '1', payload: '{"id":"2"}' }]);
  t.equal(store.generationPosition(), 5);
  t.same(run(), { upTo: 7, more: false, changed: 0 }, 'a run over only its own delivery events changes nothing');
});

t.test('a run reads at most `limit` actions, and passes other events in one go', async (t) => {
  const { store, append, run } = setup(t);
  for (let i = 0; i < 50; i++) append('post_created', '3', null, String(200 + i));
  append('like', '2', '1', '100');
  append('like', '3', '1', '100');
  append('follow', '3', '1', null);
  t.same(run(2), { upTo: 52, more: true, changed: 1 }, 'stops at its second action');
  t.same(run(2), { upTo: 54, more: false, changed: 1 }, 'to the newest event: the first run appended a delivery event (54)');
  t.same(store.page('1', null, 10).items.map((n) => n.actor_count), [1, 2]);
});

t.test('a deleted post takes its notifications with it', async (t) => {
  const { store, append, run } = setup(t);
  append('like', '2', '1', '100');
  append('reply', '3', '1', '100');
  append('follow', '2', '1', null);
  append('post_deleted', '1', null, '100');
  run();
  t.same(store.page('1', null, 10).items.map((n) => n.type), ['follow']);
  t.equal(store.unreadCount('1'), 1);
});
