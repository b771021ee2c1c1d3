// Notification preferences below HTTP: what GET answers of what is stored, so that a client
// sending it back with PUT succeeds (the endpoints themselves: test/e2e/notifications.test.ts).
import t from 'tap';
import { AccountStore } from '../../src/accounts/store';
import type { Config } from '../../src/config';
import { HttpError } from '../../src/http/errors';
import { NotificationService } from '../../src/notifications/service';
import { NotificationStore } from '../../src/notifications/store';
import { notificationWrites } from '../../src/notifications/writes';
import type { Writes } from '../../src/writer/operations';
import { TOP } from '../../src/core/snowflake';
import { addUsers, tempStore } from '../helpers/store';

const AT = '2026-11-22T13:00:00.000Z';

function setup(t: Parameters<typeof tempStore>[0]) {
  const { db } = tempStore(t, 'perch-preferences-');
  addUsers(db, { '1': 'ann', '2': 'ben' });
  const store = new NotificationStore(db);
  const ops = notificationWrites(db);
  // The writer's operations, run at once on the same database.
  const writes = { run: async (op: string, args: unknown) => (ops as any)[op](args) } as Writes<ReturnType<typeof notificationWrites>>;
  // Preferences read no configuration.
  const service = new NotificationService(store, new AccountStore(db), writes, {} as Config);
  return { store, service };
}

t.test("one's own id, stored before PUT refused it, is left out of GET, so GET then PUT round-trips", async (t) => {
  const { store, service } = setup(t);
  store.setPreferences('1', { muted_post_ids: [], priority_user_ids: ['1', '2'], types: { like: true, reply: false, follow: true } }, AT);
  const got = service.preferences('1');
  t.same(got, { muted_post_ids: [], priority_user_ids: ['2'], types: { like: true, reply: false, follow: true } });
  t.same(await service.setPreferences('1', got), got, 'what GET answered is accepted back');
  t.same(store.preferences('1').priority_user_ids, ['2'], 'and stored without it');
  t.same(service.preferences('2').priority_user_ids, [], "someone else's are their own");
});

t.test("PUT refuses one's own id, naming the entry", async (t) => {
  const { service } = setup(t);
  try {
    await service.setPreferences('2', { priority_user_ids: ['1', '2'] });
    t.fail('accepted');
  } catch (err) {
    t.ok(err instanceof HttpError);
    t.same((err as HttpError).body(), {
      error: 'invalid_request',
      message: 'priority_user_ids.1: is your own id; your own actions never notify you',
      details: [{ path: 'priority_user_ids.1', message: 'is your own id; your own actions never notify you' }],
    });
  }
  t.same(await service.setPreferences('2', { priority_user_ids: ['1'] }), { muted_post_ids: [], priority_user_ids: ['1'], types: { like: true, reply: true, follow: true } });
});

t.test('a push subscription under a key revoked since the server checked it: 401 that says so, nothing stored', async (t) => {
  const { db } = tempStore(t, 'perch-push-key-');
  addUsers(db, { '1': 'ann' });
  const accounts = new AccountStore(db);
  accounts.addKey('key_live', '1', 'hash-live', false, AT);
  accounts.addKey('key_gone', '1', 'hash-gone', false, AT);
  accounts.revokeKey('key_gone', AT);
  const ops = notificationWrites(db);
  const sub = { userId: '1', endpoint: 'https://push.example/a', p256dh: 'p', auth: 'a', now: AT };
  t.equal(ops.addPushSubscription({ ...sub, keyId: 'key_live' }).created, true, 'a live key registers');
  const refused = (() => {
    try {
      ops.addPushSubscription({ ...sub, keyId: 'key_gone', endpoint: 'https://push.example/b' });
    } catch (err) {
      return err;
    }
  })() as HttpError;
  t.ok(refused instanceof HttpError);
  t.equal(refused.status, 401);
  // Not the router's "unknown or revoked": the key was known when the request was let in.
  t.equal(refused.message, 'The API key has been revoked.');
  t.equal(new NotificationStore(db).subscriptionsPage('1', TOP, 100).length, 1, 'nothing stored under the revoked key');
});
