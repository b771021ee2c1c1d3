// GET /api/posts/{id}/replies: a post's direct replies, oldest first, paged, with their authors;
// deleted replies are left out; an unknown or deleted post is 404; cursors belong to one post.
import t from 'tap';
import { startServer, type TestServer, type Key } from '../helpers/server';
import { allPages, createPost } from '../social/helpers';

let server: TestServer;
let alice: Key;
let bob: Key;

t.before(async () => {
  server = await startServer();
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
});
t.teardown(() => server?.close());

t.test('direct replies, oldest first, across pages, without deleted ones or replies to replies', async (t) => {
  const parent = await createPost(server, alice.key, 'the parent');
  const replies: any[] = [];
  for (let i = 0; i < 7; i++) replies.push(await createPost(server, i % 2 ? alice.key : bob.key, `reply ${i}`, { reply_to: parent.id }));
  const nested = await createPost(server, alice.key, 'a reply to a reply', { reply_to: replies[0].id });
  t.equal((await server.request('DELETE', `/api/posts/${replies[3].id}`, { key: replies[3].author_id === bob.user_id ? bob.key : alice.key })).status, 204);
  await server.post(`/api/posts/${replies[1].id}/like`, { key: bob.key });

  const first = await server.get(`/api/posts/${parent.id}/replies?limit=2`);
  t.equal(first.status, 200);
  t.same(first.json.items.map((p: any) => p.text), ['reply 0', 'reply 1']);
  t.same(first.json.items[0], { ...replies[0], like_count: 0, reply_count: 1, author: { id: bob.user_id, handle: 'bob' } }, 'a post with its counts and author');
  t.equal(first.json.items[1].like_count, 1);
  t.type(first.json.next_cursor, 'string');

  const { items, pages } = await allPages(server, `/api/posts/${parent.id}/replies?limit=2`);
  t.same(items.map((p: any) => p.text), ['reply 0', 'reply 1', 'reply 2', 'reply 4', 'reply 5', 'reply 6'], 'oldest first, the deleted one left out');
  t.equal(pages, 3);
  t.notOk(items.some((p: any) => p.id === nested.id), 'only direct replies');
  t.same((await server.get(`/api/posts/${replies[0].id}/replies`)).json.items.map((p: any) => p.id), [nested.id]);
  t.same((await server.get(`/api/posts/${nested.id}/replies`)).json, { items: [], next_cursor: null });
});

t.test('errors: unknown, malformed or deleted post 404; bad limit and foreign cursors 400', async (t) => {
  const a = await createPost(server, alice.key, 'a');
  const b = await createPost(server, alice.key, 'b');
  await createPost(server, bob.key, 'r1', { reply_to: a.id });
  await createPost(server, bob.key, 'r2', { reply_to: a.id });
  t.equal((await server.get('/api/posts/123456789/replies')).status, 404);
  t.equal((await server.get('/api/posts/not-an-id/replies')).status, 404);
  t.equal((await server.request('DELETE', `/api/posts/${b.id}`, { key: alice.key })).status, 204);
  const gone = await server.get(`/api/posts/${b.id}/replies`);
  t.equal(gone.status, 404);
  t.equal(gone.json.error, 'not_found');
  for (const q of ['limit=0', 'limit=101', 'cursor=bogus', 'cursor=']) {
    const r = await server.get(`/api/posts/${a.id}/replies?${q}`);
    t.equal(r.status, 400, q);
  }
  const page = await server.get(`/api/posts/${a.id}/replies?limit=1`);
  const foreign = await server.get(`/api/posts/${b.id}/replies?cursor=${encodeURIComponent(page.json.next_cursor)}`);
  t.equal(foreign.status, 400, 'a cursor of another post\'s replies');
  t.equal((await server.request('POST', `/api/posts/${a.id}/replies`)).status, 405);
});
