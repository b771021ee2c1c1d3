// The outbox pruning job in a running server: events older than the retention that every consumer
// has processed are deleted, recent ones are kept, and the posts stay readable.
import t from 'tap';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir } from '../helpers/server';
import { addUsers, groupCommit } from '../helpers/store';
import { eventually } from '../social/helpers';
import { openSqlite } from '../../src/store/sqlite';
import { migrateAll } from '../../src/capabilities';
import { IdGenerator } from '../../src/core/snowflake';
import { OUTBOX_RETENTION_MS } from '../../src/outbox/module';

const ALICE = '1001';

t.test('processed events past the retention are pruned by the running server', async (t) => {
  const dataDir = tempDataDir('perch-outbox-prune-e2e-');
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const db = openSqlite(dataDir);
  migrateAll(db);
  addUsers(db, { [ALICE]: 'alice' });
  const ids = new IdGenerator(1023);
  const group = groupCommit(db);
  const post = (createdAt: string): [string, unknown] => ['createPost', { id: ids.next(), authorId: ALICE, text: 'hello', mediaIds: [], replyTo: null, createdAt }];
  const old = new Date(Date.now() - OUTBOX_RETENTION_MS - 60_000).toISOString();
  // Three posts made past the retention and processed by every consumer, then one recent post.
  t.ok(group.commit([post(old), post(old), post(old)]).every((o) => o.ok));
  t.ok(group.commit([['indexAuthorPosts', { now: old }], ['advanceConsumer', { name: 'fanout', seq: 3, now: old }]]).every((o) => o.ok));
  t.ok(group.commit([post(new Date().toISOString())]).every((o) => o.ok));
  db.close();

  const server = await startServer({ dataDir });
  t.teardown(() => server.close());
  const kept = async () => Number(/^perch_outbox_events (\d+)$/m.exec((await server.get('/metrics')).text)?.[1]);
  t.equal(await kept(), 4, 'before the job runs');
  // The job runs every 10 s.
  await eventually('the old events pruned', 25_000, async () => ((await kept()) === 1 ? true : undefined));
  const status = JSON.parse((await server.cli(['status', '--json'])).stdout);
  t.equal(status.outbox.events, 1, 'the recent event is kept');
  const listed = await server.get(`/api/users/${ALICE}/posts`);
  t.equal(listed.status, 200);
  t.equal(listed.json.items.length, 4, 'every post is still listed');
});
