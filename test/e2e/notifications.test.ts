import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { allPages, createPost } from '../social/helpers';
import { follow, generated, like, notificationsOf, waitForNotifications } from '../notifications/helpers';

/**
 * A short window, so that a test can wait it out; long enough that what a test expects to land in
 * one row (several requests and waits for the notifications to be made) does so on a starved
 * machine too.
 */
const WINDOW_SECONDS = 5;

let server: TestServer;
const users: Record<string, Key> = {};

t.before(async () => {
  server = await startServer({ config: { notifications: { aggregation_window_seconds: WINDOW_SECONDS } } });
  for (const handle of ['ann', 'ben', 'cid', 'dan', 'eve', 'fay', 'gus', 'hal']) users[handle] = await server.keygen(handle);
});
t.teardown(() => server.close());

const FIELDS = ['actor_count', 'actor_ids', 'created_at', 'id', 'post_id', 'priority', 'read', 'type', 'updated_at'];

t.test('a like, a reply and a follow each notify their recipient, and only them', async (t) => {
  const { gus, hal, cid, dan } = users;
  const post = await createPost(server, gus.key, 'a post of gus');
  await like(server, hal.key, post.id);
  const reply = await createPost(server, cid.key, 'cid replies', { reply_to: post.id });
  await follow(server, dan.key, gus.user_id);
  const items = await waitForNotifications(server, gus.key, 'three notifications for gus', (items) => items.length === 3);
  t.same(Object.keys(items[0]).sort(), FIELDS);
  t.same(
    items.map((n) => [n.type, n.actor_ids, n.actor_count, n.post_id, n.read, n.priority]),
    [
      ['follow', [dan.user_id], 1, null, false, false],
      ['reply', [cid.user_id], 1, post.id, false, false],
      ['like', [hal.user_id], 1, post.id, false, false],
    ],
    'newest activity first; a reply names the parent post',
  );
  for (const n of items) {
    t.match(n.id, /^[1-9][0-9]*$/);
    t.match(n.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    t.equal(n.updated_at, n.created_at, 'one actor: never updated');
  }
  // A reply to the reply notifies its author (cid), about cid's post.
  await createPost(server, hal.key, 'hal answers cid', { reply_to: reply.id });
  const ofCid = await waitForNotifications(server, cid.key, 'a reply notification for cid', (items) => items.length === 1);
  t.same([ofCid[0].type, ofCid[0].actor_ids, ofCid[0].post_id], ['reply', [hal.user_id], reply.id]);
  t.same(await notificationsOf(server, hal.key), [], 'the actors get nothing');
  t.same(await notificationsOf(server, dan.key), []);
  t.equal((await notificationsOf(server, gus.key)).length, 3, 'gus got nothing for the reply to cid');
});

t.test('acting on oneself never notifies', async (t) => {
  const { fay } = users;
  const post = await createPost(server, fay.key, 'talking to myself');
  await like(server, fay.key, post.id);
  await createPost(server, fay.key, 'and answering myself', { reply_to: post.id });
  t.equal((await server.post(`/api/users/${fay.user_id}/follow`, { key: fay.key })).status, 400);
  t.same(await notificationsOf(server, fay.key), []);
  t.equal((await server.get('/api/me', { key: fay.key })).json.unread_notifications, 0);
});

t.test('aggregation: one row per key within the window, a new one after it', async (t) => {
  const { ann, ben, cid, dan, eve, fay } = users;
  const post = await createPost(server, ann.key, 'likeable');
  for (const k of [ben, cid, dan]) await like(server, k.key, post.id);
  let items = await waitForNotifications(server, ann.key, 'three likers in one row', (items) => items.some((n) => n.actor_count === 3));
  t.equal(items.length, 1);
  const row = items[0];
  t.same([row.type, row.post_id, row.actor_ids, row.actor_count, row.read], ['like', post.id, [dan.user_id, cid.user_id, ben.user_id], 3, false]);
  t.ok(row.updated_at > row.created_at, 'updated_at moved with each actor');

  // Read, then another actor within the window: the same row, unread again, at the top.
  await follow(server, fay.key, ann.user_id);
  await waitForNotifications(server, ann.key, 'the follow', (items) => items.length === 2);
  t.equal((await server.post(`/api/notifications/${row.id}/read`, { key: ann.key })).status, 204);
  t.equal((await notificationsOf(server, ann.key)).find((n) => n.id === row.id).read, true);
  await like(server, eve.key, post.id);
  items = await waitForNotifications(server, ann.key, 'eve joins the row', (items) => items[0].id === row.id && items[0].actor_count === 4);
  t.same(items.map((n) => n.type), ['like', 'follow'], 'the changed row moved to the top');
  t.same(items[0].actor_ids, [eve.user_id, dan.user_id, cid.user_id, ben.user_id], 'newest first');
  t.equal(items[0].read, false, 'unread again');
  t.equal(items[0].created_at, row.created_at);
  t.ok(items[0].updated_at > row.updated_at);

  // An unlike removes nothing; a like again after it is a new action with the same key: cid moves
  // to the front, counted once, and the row, read meanwhile, is unread again and moves.
  t.equal((await server.post(`/api/notifications/${row.id}/read`, { key: ann.key })).status, 204);
  t.equal((await server.request('DELETE', `/api/posts/${post.id}/like`, { key: cid.key })).status, 204);
  await generated(server);
  const unliked = (await notificationsOf(server, ann.key)).find((n) => n.id === row.id);
  t.same([unliked.actor_count, unliked.actor_ids, unliked.read], [4, [eve.user_id, dan.user_id, cid.user_id, ben.user_id], true], 'the unlike changed nothing');
  await like(server, cid.key, post.id);
  items = await waitForNotifications(server, ann.key, 'cid likes again', (items) => items[0].id === row.id && items[0].actor_ids[0] === cid.user_id);
  t.same([items[0].actor_count, items[0].actor_ids], [4, [cid.user_id, eve.user_id, dan.user_id, ben.user_id]], 'in front, not twice');
  t.equal(items[0].read, false, 'unread again');
  t.ok(items[0].updated_at > unliked.updated_at, 'updated_at moved');

  // Once the row is older than the window, a like makes a new row.
  const windowEnds = Date.parse(row.created_at) + WINDOW_SECONDS * 1000;
  while (Date.now() <= windowEnds + 50) await new Promise((r) => setTimeout(r, windowEnds + 60 - Date.now()));
  const { hal } = users;
  await like(server, hal.key, post.id);
  items = await waitForNotifications(server, ann.key, 'a new row after the window', (items) => items.length === 3);
  t.same([items[0].type, items[0].post_id, items[0].actor_ids, items[0].actor_count], ['like', post.id, [hal.user_id], 1]);
  t.not(items[0].id, row.id);
  t.equal(items.find((n) => n.id === row.id).actor_count, 4, 'the old row is left as it was');
});

t.test('replies to one post aggregate; follows aggregate per recipient', async (t) => {
  const { eve, ben, cid, dan } = users;
  const post = await createPost(server, eve.key, 'ask me anything');
  await createPost(server, ben.key, 'q1', { reply_to: post.id });
  await createPost(server, cid.key, 'q2', { reply_to: post.id });
  await createPost(server, ben.key, 'q3', { reply_to: post.id });
  await follow(server, ben.key, eve.user_id);
  await follow(server, dan.key, eve.user_id);
  const items = await waitForNotifications(server, eve.key, 'replies and follows', (items) =>
    items.some((n) => n.type === 'follow' && n.actor_count === 2) && items.some((n) => n.type === 'reply' && n.actor_count === 2),
  );
  const replies = items.filter((n) => n.type === 'reply');
  t.equal(replies.length, 1);
  t.same(replies[0].actor_ids, [ben.user_id, cid.user_id], 'a second reply by ben moves him to the front, counted once');
  t.same(items.find((n) => n.type === 'follow').actor_ids, [dan.user_id, ben.user_id]);
});

t.test("a deleted post's notifications disappear", async (t) => {
  const { hal, ben, cid } = users;
  const post = await createPost(server, hal.key, 'soon gone');
  await like(server, ben.key, post.id);
  await createPost(server, cid.key, 'a reply', { reply_to: post.id });
  await waitForNotifications(server, hal.key, 'like and reply', (items) => items.filter((n) => n.post_id === post.id).length === 2);
  t.equal((await server.request('DELETE', `/api/posts/${post.id}`, { key: hal.key })).status, 204);
  await waitForNotifications(server, hal.key, 'none about the deleted post', (items) => !items.some((n) => n.post_id === post.id));
  t.pass('gone');
});

t.test('preferences: defaults, validation, and nothing changed by a refused PUT', async (t) => {
  const { dan } = users;
  const defaults = { muted_post_ids: [], priority_user_ids: [], types: { like: true, reply: true, follow: true } };
  const get = await server.get('/api/notifications/preferences', { key: dan.key });
  t.equal(get.status, 200);
  t.same(get.json, defaults);
  t.equal((await server.get('/api/notifications/preferences')).status, 401);
  const bad = async (json: unknown, path: string) => {
    const r = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json });
    t.equal(r.status, 400, JSON.stringify(json));
    t.equal(r.json.error, 'invalid_request');
    t.ok(r.json.details.some((d: any) => d.path === path), `names ${path}: ${JSON.stringify(r.json.details)}`);
  };
  await bad({ muted_post_ids: [], extra: 1 }, 'extra');
  await bad({ types: { like: 'no' } }, 'types.like');
  await bad({ types: { like: true, comment: true } }, 'types.comment');
  await bad({ muted_post_ids: ['not-an-id'] }, 'muted_post_ids.0');
  await bad({ muted_post_ids: ['123456789'] }, 'muted_post_ids.0');
  await bad({ priority_user_ids: [users.ann.user_id, '999'] }, 'priority_user_ids.1');
  await bad({ priority_user_ids: 'x' }, 'priority_user_ids');
  t.same((await server.get('/api/notifications/preferences', { key: dan.key })).json, defaults, 'nothing changed');
  const partial = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: { types: { reply: false } } });
  t.equal(partial.status, 200);
  t.same(partial.json, { muted_post_ids: [], priority_user_ids: [], types: { like: true, reply: false, follow: true } }, 'left out: defaults');
  const back = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: defaults });
  t.same(back.json, defaults);
  t.same((await server.get('/api/notifications/preferences', { key: dan.key })).json, defaults);
});

t.test('preferences: one cannot be one\'s own priority user', async (t) => {
  // One's own actions never notify oneself: as a priority user one would change nothing, so the
  // id is refused like any other that cannot be meant (docs/notifications.md).
  const { dan, ann } = users;
  const alone = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: { priority_user_ids: [dan.user_id] } });
  t.equal(alone.status, 400);
  t.same(alone.json, {
    error: 'invalid_request',
    message: 'priority_user_ids.0: is your own id; your own actions never notify you',
    details: [{ path: 'priority_user_ids.0', message: 'is your own id; your own actions never notify you' }],
  });
  const among = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: { priority_user_ids: [ann.user_id, dan.user_id], types: { like: false } } });
  t.equal(among.status, 400, 'among others too');
  t.same(among.json.details, [{ path: 'priority_user_ids.1', message: 'is your own id; your own actions never notify you' }], 'naming the entry');
  t.same(
    (await server.get('/api/notifications/preferences', { key: dan.key })).json,
    { muted_post_ids: [], priority_user_ids: [], types: { like: true, reply: true, follow: true } },
    'nothing of either was stored',
  );
  const others = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: { priority_user_ids: [ann.user_id] } });
  t.equal(others.status, 200, 'someone else is accepted');
  t.same(others.json.priority_user_ids, [ann.user_id]);
  // Someone else may have dan as theirs.
  const ofAnn = await server.request('PUT', '/api/notifications/preferences', { key: ann.key, json: { priority_user_ids: [dan.user_id] } });
  t.equal(ofAnn.status, 200);
  for (const key of [dan.key, ann.key]) await server.request('PUT', '/api/notifications/preferences', { key, json: {} });
});

t.test('preferences: a muted post deleted since is left out of GET, so GET then PUT round-trips', async (t) => {
  const { dan } = users;
  const kept = (await server.post('/api/posts', { key: dan.key, json: { text: 'kept and muted' } })).json.id;
  const doomed = (await server.post('/api/posts', { key: dan.key, json: { text: 'muted, then deleted' } })).json.id;
  const put = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: { muted_post_ids: [doomed, kept] } });
  t.same(put.json.muted_post_ids, [doomed, kept]);
  t.equal((await server.request('DELETE', `/api/posts/${doomed}`, { key: dan.key })).status, 204);
  const got = await server.get('/api/notifications/preferences', { key: dan.key });
  t.same(got.json.muted_post_ids, [kept], 'the deleted post is left out');
  const again = await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: got.json });
  t.equal(again.status, 200, 'what GET answered is accepted back');
  t.same(again.json, got.json);
  await server.request('PUT', '/api/notifications/preferences', { key: dan.key, json: {} });
});

t.test('preferences apply before storing: disabled types, muted threads, priority actors', async (t) => {
  const { cid, ben, dan, eve, fay } = users;
  const muted = await createPost(server, cid.key, 'a thread to mute');
  const mine = await createPost(server, cid.key, 'cid answers in the muted thread', { reply_to: muted.id });
  const other = await createPost(server, cid.key, 'a thread not muted');
  const put = await server.request('PUT', '/api/notifications/preferences', {
    key: cid.key,
    json: { muted_post_ids: [muted.id, muted.id], priority_user_ids: [ben.user_id], types: { like: true, reply: true, follow: false } },
  });
  t.equal(put.status, 200);
  t.same(put.json, { muted_post_ids: [muted.id], priority_user_ids: [ben.user_id], types: { like: true, reply: true, follow: false } });
  const before = (await notificationsOf(server, cid.key)).length;

  await like(server, dan.key, muted.id); // the muted post
  await like(server, dan.key, mine.id); // a post under it
  await createPost(server, eve.key, 'deep in the muted thread', { reply_to: mine.id }); // a reply under it
  await follow(server, fay.key, cid.user_id); // a disabled type
  await like(server, eve.key, other.id);
  await like(server, dan.key, other.id);
  await like(server, ben.key, other.id); // priority: a row of its own
  await createPost(server, ben.key, 'priority reply', { reply_to: other.id });
  await createPost(server, ben.key, 'priority reply again', { reply_to: other.id });
  const items = (await waitForNotifications(server, cid.key, 'the notifications preferences let through', (items) => items.length === before + 4)).slice(0, 4);
  t.same(
    items.map((n) => [n.type, n.actor_ids, n.post_id, n.priority]),
    [
      ['reply', [ben.user_id], other.id, true],
      ['reply', [ben.user_id], other.id, true],
      ['like', [ben.user_id], other.id, true],
      ['like', [dan.user_id, eve.user_id], other.id, false],
    ],
    'nothing from the muted thread or the disabled type; priority actions never aggregated',
  );
  await generated(server);
  t.equal((await notificationsOf(server, cid.key)).length, before + 4);
  // A priority actor's like again after an unlike is an action of its own: a row of its own.
  t.equal((await server.request('DELETE', `/api/posts/${other.id}/like`, { key: ben.key })).status, 204);
  await like(server, ben.key, other.id);
  const again = await waitForNotifications(server, cid.key, "ben's like again", (items) => items.length === before + 5);
  t.same([again[0].type, again[0].actor_ids, again[0].priority], ['like', [ben.user_id], true]);
  t.not(again[0].id, items[2].id, 'not the first like\'s row');
});

t.test('read, read-all and the unread count', async (t) => {
  const { ben, ann, eve } = users;
  const p1 = await createPost(server, ben.key, 'one');
  const p2 = await createPost(server, ben.key, 'two');
  await like(server, ann.key, p1.id);
  await like(server, ann.key, p2.id);
  const items = await waitForNotifications(server, ben.key, 'two likes', (items) => items.filter((n) => n.type === 'like').length >= 2);
  const unread = items.filter((n) => !n.read).length;
  t.equal((await server.get('/api/me', { key: ben.key })).json.unread_notifications, unread);
  const target = items[0];
  t.equal((await server.post(`/api/notifications/${target.id}/read`, { key: ben.key })).status, 204);
  t.equal((await server.post(`/api/notifications/${target.id}/read`, { key: ben.key })).status, 204, 'idempotent');
  t.equal((await server.get('/api/me', { key: ben.key })).json.unread_notifications, unread - 1);
  for (const ref of ['999999', 'abc', '0', '-1']) {
    const r = await server.post(`/api/notifications/${ref}/read`, { key: ben.key });
    t.equal(r.status, 404, ref);
    t.equal(r.json.error, 'not_found');
  }
  const other = await server.post(`/api/notifications/${target.id}/read`, { key: eve.key });
  t.equal(other.status, 404, "another user's notification");
  t.equal((await server.post(`/api/notifications/${target.id}/read`)).status, 401);
  t.equal((await server.post('/api/notifications/read-all')).status, 401);
  const eveUnread = (await server.get('/api/me', { key: eve.key })).json.unread_notifications;
  t.equal((await server.post('/api/notifications/read-all', { key: ben.key })).status, 204);
  t.ok((await notificationsOf(server, ben.key)).every((n) => n.read));
  t.equal((await server.get('/api/me', { key: ben.key })).json.unread_notifications, 0);
  t.equal((await server.get('/api/me', { key: eve.key })).json.unread_notifications, eveUnread, "others' untouched");
  t.equal((await server.get(`/api/users/${ben.user_id}`)).json.unread_notifications, undefined, 'only the caller sees it');
});

t.test('paging while new activity arrives: no row skipped or repeated', async (t) => {
  const { fay, gus, hal, ann } = users;
  // gus likes 12 of fay's posts: 12 rows.
  const posts = [];
  for (let i = 0; i < 12; i++) posts.push(await createPost(server, fay.key, `page post ${i}`));
  for (const p of posts) await like(server, gus.key, p.id);
  const before = await waitForNotifications(server, fay.key, '12 like rows', (items) => items.filter((n) => n.type === 'like').length === 12);
  const original = before.map((n) => n.id);

  const first = await server.get('/api/notifications?limit=5', { key: fay.key });
  t.equal(first.status, 200);
  t.same(first.json.items.map((n: any) => n.id), original.slice(0, 5));
  // Meanwhile: a row on a later page moves to the top, a row already seen moves, a new row comes.
  const laterRow = before[9];
  const seenRow = before[1];
  await like(server, hal.key, laterRow.post_id);
  await like(server, hal.key, seenRow.post_id);
  const fresh = await createPost(server, fay.key, 'new activity');
  await like(server, ann.key, fresh.id);
  await waitForNotifications(server, fay.key, 'the new activity', (items) => items[0].post_id === fresh.id && items[1].id === seenRow.id);

  const seen = first.json.items.map((n: any) => n.id);
  let cursor = first.json.next_cursor;
  const pages: any[][] = [];
  while (cursor) {
    const r = await server.get(`/api/notifications?limit=5&cursor=${encodeURIComponent(cursor)}`, { key: fay.key });
    t.equal(r.status, 200);
    pages.push(r.json.items);
    seen.push(...r.json.items.map((n: any) => n.id));
    cursor = r.json.next_cursor;
  }
  t.same(seen, original, 'every row of the first page\'s moment, once, in that order');
  const moved = pages.flat().find((n) => n.id === laterRow.id);
  t.same([moved.actor_count, moved.actor_ids], [2, [hal.user_id, gus.user_id]], 'a moved row shows its new content where it was');
  const fresh2 = await allPages(server, '/api/notifications?limit=5', fay.key);
  t.same(fresh2.items.slice(0, 3).map((n) => n.id).slice(1), [seenRow.id, laterRow.id], 'a new reading starts from the newest activity');
  t.equal(fresh2.items.length, 13);
});

t.test('list errors: limit and cursor', async (t) => {
  const { fay, gus } = users;
  t.equal((await server.get('/api/notifications')).status, 401);
  for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=abc', 'cursor=']) {
    const r = await server.get(`/api/notifications?${q}`, { key: fay.key });
    t.equal(r.status, 400, q);
    t.equal(r.json.error, 'invalid_request');
  }
  const page = await server.get('/api/notifications?limit=1', { key: fay.key });
  const foreign = await server.get(`/api/notifications?cursor=${encodeURIComponent(page.json.next_cursor)}`, { key: gus.key });
  t.equal(foreign.status, 400, "another user's cursor");
  const timelineCursor = (await server.get('/api/timeline?limit=1', { key: fay.key })).json.next_cursor;
  if (timelineCursor) t.equal((await server.get(`/api/notifications?cursor=${encodeURIComponent(timelineCursor)}`, { key: fay.key })).status, 400, "another list's cursor");
  const empty = await server.get('/api/notifications', { key: users.hal.key });
  t.equal(empty.status, 200);
  t.same(empty.json, { items: [], next_cursor: null });
});
