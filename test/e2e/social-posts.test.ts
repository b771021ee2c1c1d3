import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { allPages, createPost } from '../social/helpers';

let server: TestServer;
let alice: Key;
let bob: Key;

t.before(async () => {
  server = await startServer();
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
});
t.teardown(() => server.close());

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test('POST /api/posts creates a post with a snowflake id', async (t) => {
  const before = Date.now();
  const r = await server.post('/api/posts', { key: alice.key, json: { text: 'hello world' } });
  t.equal(r.status, 201);
  t.same(Object.keys(r.json).sort(), ['author_id', 'created_at', 'id', 'media_ids', 'reply_to', 'text']);
  t.equal(r.json.text, 'hello world');
  t.equal(r.json.author_id, alice.user_id);
  t.same(r.json.media_ids, []);
  t.equal(r.json.reply_to, null);
  t.match(r.json.created_at, ISO_MS);
  t.match(r.json.id, /^[1-9][0-9]{17,18}$/);
  const ms = Number(BigInt(r.json.id) >> 22n) + 1704067200000;
  t.ok(ms >= before - 5 && ms <= Date.now() + 5, 'id carries the creation millisecond');
  const second = await createPost(server, alice.key, 'second');
  t.ok(BigInt(second.id) > BigInt(r.json.id), 'later posts have larger ids');

  const got = await server.get(`/api/posts/${r.json.id}`);
  t.equal(got.status, 200);
  t.same(got.json, { ...r.json, like_count: 0, reply_count: 0 });
});

t.test('text is NFC-normalised, counted in code points, 1 to 280', async (t) => {
  const nfd = 'Cafe\u0301';
  const r = await server.post('/api/posts', { key: alice.key, json: { text: nfd } });
  t.equal(r.status, 201);
  t.equal(r.json.text, 'Caf\u00e9');
  t.equal((await server.get(`/api/posts/${r.json.id}`)).json.text, 'Caf\u00e9', 'stored normalised');

  t.equal((await server.post('/api/posts', { key: alice.key, json: { text: '😀'.repeat(280) } })).status, 201, '280 emoji (560 UTF-16 units)');
  t.equal((await server.post('/api/posts', { key: alice.key, json: { text: 'e\u0301'.repeat(280) } })).status, 201, '280 after NFC');

  const long = await server.post('/api/posts', { key: alice.key, json: { text: 'x'.repeat(281) } });
  t.equal(long.status, 400);
  t.equal(long.json.error, 'invalid_request');
  t.same(long.json.details, [{ path: 'text', message: 'text is 281 characters long; the limit is 280' }]);

  for (const text of ['', '   ', '\n\t\u00a0\u3000']) {
    const r2 = await server.post('/api/posts', { key: alice.key, json: { text } });
    t.equal(r2.status, 400, `blank ${JSON.stringify(text)}`);
    t.equal(r2.json.details[0].path, 'text');
  }
});

t.test('text that is not Unicode, a body that is not UTF-8, a media_ids string: 400, nothing stored', async (t) => {
  const posts = async () => (await allPages(server, `/api/users/${alice.user_id}/posts?limit=100`)).items.length;
  const before = await posts();
  for (const text of ['\ud800', 'lone \udc00 low', '\udc00'.repeat(280), 'pair reversed \ude00\ud83d']) {
    const r = await server.post('/api/posts', { key: alice.key, json: { text } });
    t.equal(r.status, 400, JSON.stringify(text));
    t.same(r.json.details, [{ path: 'text', message: 'text is not valid Unicode: it has an unpaired surrogate' }]);
  }
  t.equal((await server.post('/api/posts', { key: alice.key, json: { text: 'a real pair \ud83d\ude00' } })).status, 201, 'a surrogate pair is fine');
  // {"text":"<0xff 0xfe>"}
  const notUtf8 = Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const bad = await server.post('/api/posts', { key: alice.key, body: notUtf8, headers: { 'content-type': 'application/json' } });
  t.equal(bad.status, 400);
  t.same(bad.json, { error: 'invalid_request', message: 'The body is not valid UTF-8 JSON.', details: [{ path: '', message: 'the body is not valid UTF-8' }] });
  const mediaString = await server.post('/api/posts', { key: alice.key, json: { text: 'x', media_ids: '123456789012345678' } });
  t.equal(mediaString.status, 400);
  t.equal(mediaString.json.details.length, 1, 'one detail: not an array (no length check of the string)');
  t.equal(mediaString.json.details[0].path, 'media_ids');
  t.equal(await posts(), before + 1, 'only the valid post was stored');
});

t.test('a Basic Authorization header (a proxy\'s) leaves the key to X-Api-Key', async (t) => {
  const basic = 'Basic ' + Buffer.from('proxy:secret').toString('base64');
  const viaHeader = await server.post('/api/posts', { json: { text: 'behind a proxy' }, headers: { authorization: basic, 'x-api-key': alice.key } });
  t.equal(viaHeader.status, 201);
  t.equal(viaHeader.json.author_id, alice.user_id);
  const noKey = await server.post('/api/posts', { json: { text: 'no key' }, headers: { authorization: basic } });
  t.equal(noKey.status, 401);
  const bearerWins = await server.post('/api/posts', { json: { text: 'two keys' }, headers: { authorization: 'Bearer nope', 'x-api-key': alice.key } });
  t.equal(bearerWins.status, 401, 'a Bearer header is authoritative, even with a valid X-Api-Key beside it');
});

t.test('bad bodies are 400/415/413/401', async (t) => {
  const missing = await server.post('/api/posts', { key: alice.key, json: {} });
  t.equal(missing.status, 400);
  t.equal(missing.json.details[0].path, 'text');
  const wrongType = await server.post('/api/posts', { key: alice.key, json: { text: 5 } });
  t.equal(wrongType.status, 400);
  const unknown = await server.post('/api/posts', { key: alice.key, json: { text: 'hi', mood: 'happy' } });
  t.equal(unknown.status, 400);
  t.same(unknown.json.details, [{ path: 'mood', message: 'unknown field "mood"' }]);
  t.equal(unknown.json.message, 'mood: unknown field "mood"', 'the message names the problem');
  const notJson = await server.post('/api/posts', { key: alice.key, body: '{nope', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.status, 400);
  const textPlain = await server.post('/api/posts', { key: alice.key, body: 'hi', headers: { 'content-type': 'text/plain' } });
  t.equal(textPlain.status, 415);
  const big = await server.post('/api/posts', { key: alice.key, json: { text: 'x'.repeat(17 * 1024) } });
  t.equal(big.status, 413);
  const anon = await server.post('/api/posts', { json: { text: 'hi' } });
  t.equal(anon.status, 401);
  t.equal(anon.headers.get('www-authenticate'), 'Bearer');
  const badKey = await server.post('/api/posts', { key: 'nope', json: { text: 'hi' } });
  t.equal(badKey.status, 401);
});

t.test('media_ids: at most 4, each uploaded by the author', async (t) => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
  const upload = async (key: string) => {
    const r = await server.post('/api/media', { key, body: png, headers: { 'content-type': 'image/png' } });
    t.equal(r.status, 201);
    return r.json.id as string;
  };
  const mine = [await upload(alice.key), await upload(alice.key), await upload(alice.key), await upload(alice.key), await upload(alice.key)];
  const bobs = await upload(bob.key);
  const ok = await server.post('/api/posts', { key: alice.key, json: { text: 'pics', media_ids: mine.slice(0, 4) } });
  t.equal(ok.status, 201);
  t.same(ok.json.media_ids, mine.slice(0, 4));
  t.same((await server.get(`/api/posts/${ok.json.id}`)).json.media_ids, mine.slice(0, 4));

  const five = await server.post('/api/posts', { key: alice.key, json: { text: 'pics', media_ids: mine } });
  t.equal(five.status, 400);
  t.equal(five.json.details[0].path, 'media_ids');
  const foreign = await server.post('/api/posts', { key: alice.key, json: { text: 'pics', media_ids: [mine[0], bobs] } });
  t.equal(foreign.status, 400);
  t.same(foreign.json.details, [{ path: 'media_ids.1', message: 'no such media uploaded by you' }]);
  const unknown = await server.post('/api/posts', { key: alice.key, json: { text: 'pics', media_ids: ['123456789'] } });
  t.equal(unknown.status, 400);
  t.equal(unknown.json.details[0].path, 'media_ids.0');
  const dup = await server.post('/api/posts', { key: alice.key, json: { text: 'pics', media_ids: [mine[0], mine[0]] } });
  t.equal(dup.status, 400);
  t.equal(dup.json.details[0].path, 'media_ids.1');
});

t.test('replies: reply_to must exist; reply_count follows replies and their deletion', async (t) => {
  const parent = await createPost(server, alice.key, 'parent');
  const reply = await server.post('/api/posts', { key: bob.key, json: { text: 'a reply', reply_to: parent.id } });
  t.equal(reply.status, 201);
  t.equal(reply.json.reply_to, parent.id);
  await createPost(server, alice.key, 'self reply', { reply_to: parent.id });
  t.equal((await server.get(`/api/posts/${parent.id}`)).json.reply_count, 2);

  for (const bad of ['999999999999999999', 'abc', '0']) {
    const r = await server.post('/api/posts', { key: bob.key, json: { text: 'x', reply_to: bad } });
    t.equal(r.status, 400, `reply_to ${bad}`);
    t.same(r.json.details, [{ path: 'reply_to', message: 'no such post' }]);
  }
  t.equal((await server.request('DELETE', `/api/posts/${reply.json.id}`, { key: bob.key })).status, 204);
  t.equal((await server.get(`/api/posts/${parent.id}`)).json.reply_count, 1);

  t.equal((await server.request('DELETE', `/api/posts/${parent.id}`, { key: alice.key })).status, 204);
  const toDeleted = await server.post('/api/posts', { key: bob.key, json: { text: 'late', reply_to: parent.id } });
  t.equal(toDeleted.status, 400, 'a deleted post cannot be replied to');
});

t.test('DELETE /api/posts/:id: author 204, others 403, unknown 404', async (t) => {
  const post = await createPost(server, alice.key, 'to delete');
  const other = await server.request('DELETE', `/api/posts/${post.id}`, { key: bob.key });
  t.equal(other.status, 403);
  t.equal(other.json.error, 'forbidden');
  t.equal((await server.get(`/api/posts/${post.id}`)).status, 200, 'still there');
  t.equal((await server.request('DELETE', `/api/posts/${post.id}`)).status, 401);
  const del = await server.request('DELETE', `/api/posts/${post.id}`, { key: alice.key });
  t.equal(del.status, 204);
  t.equal(del.text, '');
  const gone = await server.get(`/api/posts/${post.id}`);
  t.equal(gone.status, 404);
  t.equal(gone.json.error, 'not_found');
  t.equal((await server.request('DELETE', `/api/posts/${post.id}`, { key: alice.key })).status, 404, 'again: 404');
  t.equal((await server.request('DELETE', '/api/posts/123456789', { key: alice.key })).status, 404);
  t.equal((await server.get('/api/posts/123456789')).status, 404);
  t.equal((await server.get('/api/posts/not-an-id')).status, 404);
});

t.test('likes are idempotent and counted', async (t) => {
  const post = await createPost(server, alice.key, 'like me');
  for (let i = 0; i < 2; i++) {
    const r = await server.post(`/api/posts/${post.id}/like`, { key: bob.key });
    t.equal(r.status, 204);
  }
  t.equal((await server.post(`/api/posts/${post.id}/like`, { key: alice.key })).status, 204);
  t.equal((await server.get(`/api/posts/${post.id}`)).json.like_count, 2);
  for (let i = 0; i < 2; i++) t.equal((await server.request('DELETE', `/api/posts/${post.id}/like`, { key: bob.key })).status, 204);
  t.equal((await server.get(`/api/posts/${post.id}`)).json.like_count, 1);
  t.equal((await server.post(`/api/posts/${post.id}/like`)).status, 401);
  t.equal((await server.post('/api/posts/123456789/like', { key: bob.key })).status, 404);
  t.equal((await server.request('DELETE', '/api/posts/123456789/like', { key: bob.key })).status, 404);
  await server.request('DELETE', `/api/posts/${post.id}`, { key: alice.key });
  t.equal((await server.post(`/api/posts/${post.id}/like`, { key: bob.key })).status, 404, 'deleted post');
});

t.test('GET /api/users/:id/posts: newest first, paginated, deleted excluded', async (t) => {
  const carol = await server.keygen('carol');
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await createPost(server, carol.key, `carol ${i}`)).id);
  await server.request('DELETE', `/api/posts/${ids[3]}`, { key: carol.key });
  const expected = ids.filter((_, i) => i !== 3).reverse();

  const first = await server.get(`/api/users/${carol.user_id}/posts?limit=4`);
  t.equal(first.status, 200);
  t.same(first.json.items.map((p: any) => p.id), expected.slice(0, 4));
  t.type(first.json.next_cursor, 'string');
  t.same(Object.keys(first.json.items[0]).sort(), ['author_id', 'created_at', 'id', 'like_count', 'media_ids', 'reply_count', 'reply_to', 'text']);
  const second = await server.get(`/api/users/${carol.user_id}/posts?limit=4&cursor=${encodeURIComponent(first.json.next_cursor)}`);
  t.same(second.json.items.map((p: any) => p.id), expected.slice(4));
  t.equal(second.json.next_cursor, null);

  const byHandle = await allPages(server, '/api/users/@Carol/posts?limit=2');
  t.same(byHandle.items.map((p) => p.id), expected);
  t.equal(byHandle.pages, 3);
  const exact = await server.get(`/api/users/${carol.user_id}/posts?limit=6`);
  t.equal(exact.json.items.length, 6);
  t.equal(exact.json.next_cursor, null, 'no empty extra page when the last page is full');

  const defaults = await server.get(`/api/users/${carol.user_id}/posts`);
  t.equal(defaults.json.items.length, 6);
  for (const bad of ['0', '101', '-1', 'abc', '1.5', '']) {
    const r = await server.get(`/api/users/${carol.user_id}/posts?limit=${bad}`);
    t.equal(r.status, 400, `limit=${bad}`);
    t.equal(r.json.details[0].path, 'limit');
  }
  t.equal((await server.get(`/api/users/${carol.user_id}/posts?limit=100`)).status, 200);
  for (const bad of ['abc', '123', first.json.next_cursor + 'x']) {
    const r = await server.get(`/api/users/${carol.user_id}/posts?cursor=${encodeURIComponent(bad)}`);
    t.equal(r.status, 400, `cursor ${bad}`);
    t.equal(r.json.details[0].path, 'cursor');
  }
  const foreign = await server.get(`/api/users/${alice.user_id}/posts?cursor=${encodeURIComponent(first.json.next_cursor)}`);
  t.equal(foreign.status, 400, "another list's cursor");
  t.equal((await server.get('/api/users/123456789/posts')).status, 404);
  t.equal((await server.get('/api/users/@nobody/posts')).status, 404);
});

t.test('concurrent posts are all durable and distinct (group commit)', async (t) => {
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => server.post('/api/posts', { key: bob.key, json: { text: `burst ${i}` } })));
  t.same(results.map((r) => r.status), Array(200).fill(201));
  const ids = new Set(results.map((r) => r.json.id));
  t.equal(ids.size, 200);
  const listed = await allPages(server, `/api/users/${bob.user_id}/posts?limit=100`);
  const burst = listed.items.filter((p) => p.text.startsWith('burst '));
  t.equal(burst.length, 200);
  t.same(burst.map((p) => p.id), [...burst.map((p) => p.id)].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1)));
});

t.test('perch status reports microblog counts', async (t) => {
  const r = await server.cli(['status', '--json']);
  t.equal(r.code, 0);
  const status = JSON.parse(r.stdout);
  t.type(status.social.posts, 'number');
  t.ok(status.social.posts > 200);
  t.type(status.outbox.fanout.lag_events, 'number');
  // Every post's event is still within the retention, so none has been pruned.
  t.ok(status.outbox.events >= status.social.posts, 'the outbox keeps recent events');
  const metrics = (await server.get('/metrics')).text;
  t.match(metrics, /^perch_outbox_events \d+$/m);
});
