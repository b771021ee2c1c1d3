// HTTP threads keep serialised posts, counts and followee lists between timeline reads. What the
// API changes reaches every thread's next read: one's own new post, a deletion, an unfollow; a
// like shows within a second. Run at 1 and 2 HTTP threads (the suite runs e2e tests at both), and
// with requests spread over fresh connections, so that both threads answer.
import t from 'tap';
import { startServer } from '../helpers/server';
import { openSqlite } from '../../src/store/sqlite';
import { createPost, eventually } from '../social/helpers';

t.test('what the API changes shows on the next read, on every thread', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const writer = await server.keygen('cachewriter');
  const reader = await server.keygen('cachereader');
  const fan = await server.keygen('cachefan');
  await server.post(`/api/users/${writer.user_id}/follow`, { key: reader.key });
  const tricky = await createPost(server, writer.key, 'quotes " and \\ backslash, </script> and émoji 🐦\u2028 line sep', {});
  const plain = await createPost(server, writer.key, 'a plain one');
  // Each read on a connection of its own, so that with two threads both serve them.
  const read = async (key = reader.key) =>
    (await server.get('/api/timeline?limit=10', { key, headers: { connection: 'close' } })).json;
  const readMany = async (key = reader.key) => Promise.all(Array.from({ length: 6 }, () => read(key)));
  const fannedOut = async () => /^perch_fanout_lag_events 0$/m.test((await server.get('/metrics')).text);
  await eventually('fan-out', 5000, async () => ((await fannedOut()) && (await read()).items.length === 2 ? true : undefined));

  const first = await read();
  const single = await server.get(`/api/posts/${tricky.id}`);
  t.same(first.items[1], { ...single.json, author: { id: writer.user_id, handle: 'cachewriter' } }, 'same fields and values as GET /api/posts/{id}');
  t.same(Object.keys(first.items[1]), ['id', 'text', 'author_id', 'media_ids', 'reply_to', 'created_at', 'like_count', 'reply_count', 'author']);

  // A like: counts may lag, by a second (the bound here leaves room for a slow machine).
  t.equal((await server.post(`/api/posts/${plain.id}/like`, { key: fan.key })).status, 204);
  await eventually('the like counted', 5000, async () => ((await read()).items[0].like_count === 1 ? true : undefined));

  // One's own new post: in one's own timeline from the read after its 201, on every thread.
  for (let i = 0; i < 5; i++) {
    const mine = await createPost(server, reader.key, `mine ${i}`);
    for (const page of await readMany()) t.equal(page.items[0].id, mine.id, `own post ${i} on the next read`);
  }

  // A deletion: gone from the next read, on every thread.
  t.equal((await server.request('DELETE', `/api/posts/${plain.id}`, { key: writer.key })).status, 204);
  for (const page of await readMany()) t.notOk(page.items.some((p: any) => p.id === plain.id), 'the deleted post is gone');

  // An unfollow: the author's posts are gone from the next read, on every thread.
  t.equal((await server.request('DELETE', `/api/users/${writer.user_id}/follow`, { key: reader.key })).status, 204);
  for (const page of await readMany()) t.notOk(page.items.some((p: any) => p.author_id === writer.user_id), 'the unfollowed author is gone');
  // Following again: the next read has the author's posts made since the follow (none yet).
  t.equal((await server.post(`/api/users/${writer.user_id}/follow`, { key: reader.key })).status, 200);
  const again = await createPost(server, writer.key, 'after the new follow');
  await eventually('the new post reaches the follower', 5000, async () => ((await read()).items.some((p: any) => p.id === again.id) ? true : undefined));
});

t.test('changes made outside the server show within the caches\' lag', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const writer = await server.keygen('outwriter');
  const reader = await server.keygen('outreader');
  await server.post(`/api/users/${writer.user_id}/follow`, { key: reader.key });
  const a = await createPost(server, writer.key, 'a');
  const b = await createPost(server, writer.key, 'b');
  const read = async () => (await server.get('/api/timeline?limit=10', { key: reader.key, headers: { connection: 'close' } })).json;
  await eventually('both posts', 5000, async () => ((await read()).items.length === 2 ? true : undefined));

  const db = openSqlite(server.dataDir);
  t.teardown(() => db.close());
  db.prepare('UPDATE posts SET like_count = 7 WHERE id = ?').run(BigInt(b.id));
  await eventually('a count changed by another connection', 3000, async () => ((await read()).items[0].like_count === 7 ? true : undefined));
  db.prepare('UPDATE posts SET deleted_at = ? WHERE id = ?').run(new Date().toISOString(), BigInt(b.id));
  await eventually('a post deleted by another connection', 3000, async () => {
    const ids = (await read()).items.map((p: any) => p.id);
    return ids.length === 1 && ids[0] === a.id ? true : undefined;
  });
  db.prepare('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?').run(reader.user_id, writer.user_id);
  await eventually('a follow removed by another connection', 8000, async () => ((await read()).items.length === 0 ? true : undefined));
});
