// HTTP threads keep serialised posts, counts and followee lists between timeline reads; whatever
// changes in SQLite (through the API or through any other connection) shows on the next read.
import t from 'tap';
import { startServer } from '../helpers/server';
import { openSqlite } from '../../src/store/sqlite';
import { createPost, eventually } from '../social/helpers';

t.test('a timeline read after any change reflects it, even one made outside the server', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const writer = await server.keygen('cachewriter');
  const reader = await server.keygen('cachereader');
  await server.post(`/api/users/${writer.user_id}/follow`, { key: reader.key });
  const tricky = await createPost(server, writer.key, 'quotes " and \\ backslash, </script> and émoji 🐦\u2028 line sep', {});
  const plain = await createPost(server, writer.key, 'a plain one');
  const read = async () => (await server.get('/api/timeline?limit=10', { key: reader.key })).json;
  // Wait for fan-out to finish, not only for both posts to show: until the first fan-out batch has
  // run, reads come from SQLite, and the first window can briefly hold only the older post.
  const fannedOut = async () => /^perch_fanout_lag_events 0$/m.test((await server.get('/metrics')).text);
  await eventually('fan-out', 5000, async () => ((await fannedOut()) && (await read()).items.length === 2 ? true : undefined));

  const first = await read();
  const single = await server.get(`/api/posts/${tricky.id}`);
  t.same(first.items[1], { ...single.json, author: { id: writer.user_id, handle: 'cachewriter' } }, 'same fields and values as GET /api/posts/{id}');
  t.same(Object.keys(first.items[1]), ['id', 'text', 'author_id', 'media_ids', 'reply_to', 'created_at', 'like_count', 'reply_count', 'author']);

  // Outside the server: another connection edits counts and soft-deletes a post.
  const db = openSqlite(server.dataDir);
  db.prepare('UPDATE posts SET like_count = 7 WHERE id = ?').run(BigInt(plain.id));
  t.equal((await read()).items[0].like_count, 7, 'a count changed by another connection shows at once');
  db.prepare('UPDATE posts SET deleted_at = ? WHERE id = ?').run(new Date().toISOString(), BigInt(plain.id));
  t.same((await read()).items.map((p: any) => p.id), [tricky.id], 'a post deleted by another connection vanishes at once');
  // A follow removed by another connection: the author's posts vanish at once.
  db.prepare('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?').run(reader.user_id, writer.user_id);
  db.close();
  t.same((await read()).items, [], 'an unfollow by another connection applies at once');
});
