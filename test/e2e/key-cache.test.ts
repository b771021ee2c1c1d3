// Authenticated keys are cached per HTTP thread; revocation still takes effect: at once through
// `perch keys revoke`, and within a second when api_keys is changed by any other means.
import t from 'tap';
import { startServer, type TestServer, type Key } from '../helpers/server';
import { openSqlite } from '../../src/store/sqlite';

let server: TestServer;
t.before(async () => {
  server = await startServer();
});
t.teardown(() => server.close());

/** Asks on several connections, so that with two threads both have used (and cached) the key. */
async function statuses(key: string): Promise<number[]> {
  return Promise.all(Array.from({ length: 6 }, () => server.post('/api/posts', { key, json: { text: 'still here?' } }).then((r) => r.status)));
}

t.test('perch keys revoke: every thread refuses the key on the next request', async (t) => {
  const k: Key = await server.keygen('revoked_by_cli');
  t.same(await statuses(k.key), [201, 201, 201, 201, 201, 201]);
  const r = await server.cli(['keys', 'revoke', await server.newestKeyId(k.user_id)]);
  t.equal(r.code, 0, r.stderr);
  t.same(await statuses(k.key), [401, 401, 401, 401, 401, 401]);
  t.equal((await server.get('/api/timeline', { key: k.key })).status, 401);
});

t.test('a revocation written straight to SQLite takes effect within a second', async (t) => {
  const k: Key = await server.keygen('revoked_in_sql');
  t.same(await statuses(k.key), [201, 201, 201, 201, 201, 201]);
  const db = openSqlite(server.dataDir);
  db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), await server.newestKeyId(k.user_id));
  db.close();
  const revokedAt = Date.now();
  await new Promise((r) => setTimeout(r, 1100));
  t.same(await statuses(k.key), [401, 401, 401, 401, 401, 401], `401 ${Date.now() - revokedAt} ms after the change`);
});
