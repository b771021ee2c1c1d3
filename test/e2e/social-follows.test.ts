import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { allPages } from '../social/helpers';

let server: TestServer;
let ann: Key;
let ben: Key;
let cid: Key;

t.before(async () => {
  server = await startServer();
  ann = await server.keygen('ann');
  ben = await server.keygen('ben');
  cid = await server.keygen('cid');
});
t.teardown(() => server.close());

const counts = async (ref: string) => {
  const r = await server.get(`/api/users/${ref}`);
  return [r.json.followers_count, r.json.following_count];
};

t.test('follow is idempotent and updates both counts', async (t) => {
  for (let i = 0; i < 2; i++) {
    const r = await server.post(`/api/users/${ben.user_id}/follow`, { key: ann.key });
    t.equal(r.status, 200);
    t.same(r.json, { following: true });
  }
  t.same(await counts(ben.user_id), [1, 0]);
  t.same(await counts(ann.user_id), [0, 1]);
  const byHandle = await server.post('/api/users/@BEN/follow', { key: cid.key });
  t.equal(byHandle.status, 200);
  t.same(await counts('@ben'), [2, 0]);
  const me = await server.get('/api/me', { key: ann.key });
  t.equal(me.json.following_count, 1);
});

t.test('follow errors: self 400, unknown 404, anonymous 401', async (t) => {
  const self = await server.post(`/api/users/${ann.user_id}/follow`, { key: ann.key });
  t.equal(self.status, 400);
  t.equal(self.json.error, 'invalid_request');
  t.equal((await server.post('/api/users/@ann/follow', { key: ann.key })).status, 400);
  const unknown = await server.post('/api/users/123456789/follow', { key: ann.key });
  t.equal(unknown.status, 404);
  t.equal(unknown.json.error, 'not_found');
  t.equal((await server.post('/api/users/@ghost/follow', { key: ann.key })).status, 404);
  t.equal((await server.post(`/api/users/${ben.user_id}/follow`)).status, 401);
  t.equal((await server.request('DELETE', `/api/users/${ben.user_id}/follow`)).status, 401);
  t.equal((await server.request('DELETE', '/api/users/123456789/follow', { key: ann.key })).status, 404);
  t.equal((await server.request('DELETE', '/api/users/@ann/follow', { key: ann.key })).status, 204, 'unfollowing oneself: 204, as the contract has every unfollow');
  t.same(await counts(ann.user_id), [0, 1], 'nothing changed');
});

t.test('unfollow: 204, idempotent, counts go back', async (t) => {
  for (let i = 0; i < 2; i++) {
    const r = await server.request('DELETE', `/api/users/${ben.user_id}/follow`, { key: cid.key });
    t.equal(r.status, 204);
    t.equal(r.text, '');
  }
  t.same(await counts(ben.user_id), [1, 0]);
  t.same(await counts(cid.user_id), [0, 0]);
});

t.test('followers and following lists: users, newest follow first, paginated', async (t) => {
  const fans: Key[] = [];
  for (let i = 0; i < 5; i++) {
    const k = await server.keygen(`fan${i}`);
    fans.push(k);
    t.equal((await server.post(`/api/users/${cid.user_id}/follow`, { key: k.key })).status, 200);
  }
  const page = await server.get(`/api/users/${cid.user_id}/followers?limit=2`);
  t.equal(page.status, 200);
  t.same(Object.keys(page.json.items[0]).sort(), ['created_at', 'followers_count', 'following_count', 'handle', 'id']);
  t.same(page.json.items.map((u: any) => u.handle), ['fan4', 'fan3']);
  t.equal(page.json.items[0].following_count, 1);
  const all = await allPages(server, `/api/users/@cid/followers?limit=2`);
  t.same(all.items.map((u) => u.handle), ['fan4', 'fan3', 'fan2', 'fan1', 'fan0']);
  t.equal(all.pages, 3);

  for (const f of fans.slice(0, 3)) await server.post(`/api/users/${ann.user_id}/follow`, { key: f.key });
  await server.post(`/api/users/${ann.user_id}/follow`, { key: fans[0].key });
  const following = await allPages(server, `/api/users/${fans[0].user_id}/following?limit=1`);
  t.same(following.items.map((u) => u.handle), ['ann', 'cid']);
  t.same((await server.get(`/api/users/${ann.user_id}/followers`)).json.items.map((u: any) => u.handle), ['fan2', 'fan1', 'fan0']);
  t.same((await server.get(`/api/users/${ann.user_id}/following`)).json, {
    items: [{ id: ben.user_id, handle: 'ben', created_at: (await server.get(`/api/users/${ben.user_id}`)).json.created_at, followers_count: 1, following_count: 0 }],
    next_cursor: null,
  });

  await server.request('DELETE', `/api/users/${cid.user_id}/follow`, { key: fans[2].key });
  t.same((await allPages(server, `/api/users/${cid.user_id}/followers`)).items.map((u) => u.handle), ['fan4', 'fan3', 'fan1', 'fan0']);
  t.same(await counts(cid.user_id), [4, 0]);

  t.equal((await server.get('/api/users/123456789/followers')).status, 404);
  t.equal((await server.get('/api/users/123456789/following')).status, 404);
  t.equal((await server.get(`/api/users/${cid.user_id}/followers?limit=0`)).status, 400);
  t.equal((await server.get(`/api/users/${cid.user_id}/following?cursor=xyz`)).status, 400);
  const fc = page.json.next_cursor;
  t.equal((await server.get(`/api/users/${cid.user_id}/following?cursor=${encodeURIComponent(fc)}`)).status, 400, 'followers cursor on following');
});
