import t from 'tap';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startServer, type TestServer } from '../helpers/server';
import { allPages, createPost, eventually } from '../social/helpers';

const timelineIds = async (server: TestServer, key: string, limit = 100): Promise<string[]> => {
  const r = await server.get(`/api/timeline?limit=${limit}`, { key });
  if (r.status !== 200) throw new Error(`timeline: ${r.status} ${r.text}`);
  return r.json.items.map((p: any) => p.id);
};

const newestFirst = (ids: string[]) => [...ids].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : BigInt(b) < BigInt(a) ? -1 : 0));

t.test('fan-out: followers see a new post within 5 s, own posts included, no backfill', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const writer = await server.keygen('writer');
  const reader = await server.keygen('reader');
  const bystander = await server.keygen('bystander');
  const old = await createPost(server, writer.key, 'before the follow');
  await server.post(`/api/users/${writer.user_id}/follow`, { key: reader.key });

  const post = await createPost(server, writer.key, 'fresh');
  const seen = await eventually('follower sees the post', 5000, async () => ((await timelineIds(server, reader.key)).includes(post.id) ? true : undefined));
  t.ok(seen.elapsedMs < 5000, `seen after ${seen.elapsedMs} ms`);
  const r = await server.get('/api/timeline', { key: reader.key });
  t.equal(r.status, 200);
  t.same(r.json.items, [{ ...post, like_count: 0, reply_count: 0, author: { id: writer.user_id, handle: 'writer' } }], 'the old post is not backfilled');
  t.equal(r.json.next_cursor, null);

  const own = await createPost(server, reader.key, 'my own');
  await eventually('own post', 5000, async () => ((await timelineIds(server, reader.key))[0] === own.id ? true : undefined));
  t.same(await timelineIds(server, reader.key), [own.id, post.id]);
  t.same(await timelineIds(server, writer.key), [post.id, old.id], "the author's own timeline");
  t.same(await timelineIds(server, bystander.key), [], 'a non-follower sees nothing');

  // Likes and replies show in the hydrated counts (which may lag by a second).
  await server.post(`/api/posts/${post.id}/like`, { key: reader.key });
  const reply = await createPost(server, reader.key, 'reply', { reply_to: post.id });
  await eventually('reply in timeline', 5000, async () => ((await timelineIds(server, reader.key))[0] === reply.id ? true : undefined));
  const { value: items } = await eventually('counts in timeline', 5000, async () => {
    const page = (await server.get('/api/timeline', { key: reader.key })).json.items;
    const counted = page.find((p: any) => p.id === post.id);
    return counted.like_count === 1 && counted.reply_count === 1 ? page : undefined;
  });
  t.equal(items[0].reply_to, post.id);
  const hydrated = items.find((p: any) => p.id === post.id);
  t.equal(hydrated.like_count, 1);
  t.equal(hydrated.reply_count, 1);

  t.equal((await server.get('/api/timeline')).status, 401);
});

t.test("one's own post is in one's home timeline as soon as it is answered, before its fan-out", async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const author = await server.keygen('author');
  const first = await createPost(server, author.key, 'the first, which gives the author a stored window');
  const fannedOut = async () => (/^perch_fanout_lag_events 0$/m.test((await server.get('/metrics')).text) ? true : undefined);
  await eventually('fan-out of the first post', 5000, fannedOut);
  const ids = [first.id];
  for (let i = 0; i < 5; i++) {
    // Read right after the 201, with no wait: the fan-out may not have reached the post yet.
    const post = await createPost(server, author.key, `post ${i}`);
    ids.unshift(post.id);
    t.same(await timelineIds(server, author.key), ids, `own post ${i} shown at once`);
  }
  await eventually('fan-out of the rest', 5000, fannedOut);
  t.same(await timelineIds(server, author.key), ids, 'the same once fanned out: no duplicates');
  const bad = await server.get('/api/timeline?limit=0', { key: author.key });
  t.equal(bad.status, 400);
  t.same(bad.json.details, [{ path: 'limit', message: bad.json.details[0].message }]);
});

t.test('deleted posts and unfollowed authors vanish; re-following does not bring old posts back', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const a = await server.keygen('a');
  const b = await server.keygen('b');
  const reader = await server.keygen('r');
  await server.post(`/api/users/${a.user_id}/follow`, { key: reader.key });
  await server.post(`/api/users/${b.user_id}/follow`, { key: reader.key });
  const pa1 = await createPost(server, a.key, 'a1');
  const pb1 = await createPost(server, b.key, 'b1');
  const pa2 = await createPost(server, a.key, 'a2');
  await eventually('all three', 5000, async () => ((await timelineIds(server, reader.key)).length === 3 ? true : undefined));
  t.same(await timelineIds(server, reader.key), [pa2.id, pb1.id, pa1.id]);

  t.equal((await server.request('DELETE', `/api/posts/${pa2.id}`, { key: a.key })).status, 204);
  t.same(await timelineIds(server, reader.key), [pb1.id, pa1.id], 'deleted post gone at once');
  t.same(await timelineIds(server, a.key), [pa1.id]);

  t.equal((await server.request('DELETE', `/api/users/${b.user_id}/follow`, { key: reader.key })).status, 204);
  t.same(await timelineIds(server, reader.key), [pa1.id], 'unfollowed author gone at once');
  const pb2 = await createPost(server, b.key, 'b2 after unfollow');
  await eventually("b's own timeline", 5000, async () => ((await timelineIds(server, b.key))[0] === pb2.id ? true : undefined));
  await new Promise((r) => setTimeout(r, 300));
  t.same(await timelineIds(server, reader.key), [pa1.id], 'not pushed after the unfollow');

  await server.post(`/api/users/${b.user_id}/follow`, { key: reader.key });
  t.same(await timelineIds(server, reader.key), [pa1.id], 're-follow does not backfill');
  const pb3 = await createPost(server, b.key, 'b3');
  await eventually('b3', 5000, async () => ((await timelineIds(server, reader.key))[0] === pb3.id ? true : undefined));
  t.same(await timelineIds(server, reader.key), [pb3.id, pa1.id]);
});

t.test('celebrity posts reach followers through the pull path', async (t) => {
  const server = await startServer({ config: { social: { celebrity_followers: 1 } } });
  t.teardown(() => server.close());
  const star = await server.keygen('star');
  const small = await server.keygen('small');
  const f1 = await server.keygen('f1');
  const f2 = await server.keygen('f2');
  for (const f of [f1, f2]) await server.post(`/api/users/${star.user_id}/follow`, { key: f.key });
  await server.post(`/api/users/${small.user_id}/follow`, { key: f1.key });
  t.equal((await server.get(`/api/users/${star.user_id}`)).json.followers_count, 2, 'above the threshold of 1');

  const s1 = await createPost(server, star.key, 'star 1');
  const m1 = await createPost(server, small.key, 'small 1');
  const s2 = await createPost(server, star.key, 'star 2');
  // Pulled at read time: visible at once, with no fan-out to wait for.
  t.same(await timelineIds(server, f2.key), [s2.id, s1.id]);
  await eventually('pushed post of the small account', 5000, async () => ((await timelineIds(server, f1.key)).length === 3 ? true : undefined));
  t.same(await timelineIds(server, f1.key), [s2.id, m1.id, s1.id], 'pushed and pulled posts merged newest first');

  // The pulled posts are not in the followers' precomputed timelines: after unfollowing, gone.
  // The star is now at 1 follower, no longer above the threshold: new posts are pushed, and the
  // ones it made as a celebrity are still pulled.
  await server.request('DELETE', `/api/users/${star.user_id}/follow`, { key: f2.key });
  t.same(await timelineIds(server, f2.key), []);
  // Paging across pushed and pulled posts returns each once.
  const more: string[] = [];
  for (let i = 0; i < 6; i++) more.push((await createPost(server, i % 2 ? star.key : small.key, `more ${i}`)).id);
  await eventually('pushed', 5000, async () => ((await timelineIds(server, f1.key)).length === 9 ? true : undefined));
  const paged = await allPages(server, '/api/timeline?limit=2', f1.key);
  t.same(paged.items.map((p) => p.id), newestFirst([s1.id, m1.id, s2.id, ...more]));
  t.equal(paged.pages, 5);
  t.same(paged.items.find((p) => p.id === s1.id).author, { id: star.user_id, handle: 'star' });
});

t.test('paging beyond the precomputed window returns every post once, newest first', async (t) => {
  const server = await startServer({ config: { social: { timeline_cap: 5 } } });
  t.teardown(() => server.close());
  const w1 = await server.keygen('w1');
  const w2 = await server.keygen('w2');
  const reader = await server.keygen('reader');
  const early = await createPost(server, reader.key, 'before following anyone');
  await server.post(`/api/users/${w1.user_id}/follow`, { key: reader.key });
  await server.post(`/api/users/${w2.user_id}/follow`, { key: reader.key });
  const ids: string[] = [early.id];
  for (let i = 0; i < 23; i++) ids.push((await createPost(server, i % 3 === 0 ? w2.key : w1.key, `post ${i}`)).id);
  const deleted = ids[10];
  // ids[10] is post 9, written by w2.
  t.equal((await server.request('DELETE', `/api/posts/${deleted}`, { key: w2.key })).status, 204);
  const expected = newestFirst(ids.filter((id) => id !== deleted));
  await eventually('fan-out done', 5000, async () => ((await timelineIds(server, reader.key, 1))[0] === expected[0] ? true : undefined));

  for (const limit of [1, 3, 5, 7, 100]) {
    const paged = await allPages(server, `/api/timeline?limit=${limit}`, reader.key);
    t.same(paged.items.map((p) => p.id), expected, `limit ${limit}`);
    t.equal(paged.pages, Math.max(1, Math.ceil(expected.length / limit)), `pages at limit ${limit}`);
  }
  t.equal(expected.length, 23);

  const first = await server.get('/api/timeline?limit=5', { key: reader.key });
  for (const bad of ['0', '101', 'x']) t.equal((await server.get(`/api/timeline?limit=${bad}`, { key: reader.key })).status, 400, `limit ${bad}`);
  const forged = await server.get('/api/timeline?cursor=MTIz~AAAAAAAAAA', { key: reader.key });
  t.equal(forged.status, 400);
  t.same(forged.json.details, [{ path: 'cursor', message: 'not a cursor issued for this list' }]);
  const foreign = await server.get(`/api/timeline?cursor=${encodeURIComponent(first.json.next_cursor)}`, { key: w1.key });
  t.equal(foreign.status, 400, "another user's cursor");
  // A client can compute any checksum that is not keyed: the cursor must still be refused.
  const body = Buffer.from('999').toString('base64url');
  const unkeyed = createHash('sha256').update(`timeline:${reader.user_id}`).update('\0').update(body).digest('base64url');
  for (const length of [10, 16]) {
    const made = await server.get(`/api/timeline?cursor=${body}~${unkeyed.slice(0, length)}`, { key: reader.key });
    t.equal(made.status, 400, `a cursor made by the client (${length} characters of checksum)`);
  }
});

t.test('cursors stay valid across a restart of the server', async (t) => {
  const first = await startServer();
  const dataDir = first.dataDir;
  const author = await first.keygen('author');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await createPost(first, author.key, `post ${i}`)).id);
  const page = await first.get(`/api/users/${author.user_id}/posts?limit=1`);
  t.same(page.json.items.map((p: any) => p.id), [ids[2]]);
  await first.stop('SIGTERM');
  const second = await startServer({ dataDir });
  t.teardown(async () => {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const next = await second.get(`/api/users/${author.user_id}/posts?limit=1&cursor=${encodeURIComponent(page.json.next_cursor)}`);
  t.equal(next.status, 200);
  t.same(next.json.items.map((p: any) => p.id), [ids[1]]);
});
