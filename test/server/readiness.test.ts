// GET /readyz: 200 with the version while both stores answer, 503 when either does not.
import t from 'tap';
import { rmSync } from 'node:fs';
import { HttpError } from '../../src/http/errors';
import { errorReply, type Ctx } from '../../src/http/router';
import { systemRoutes } from '../../src/server/routes';
import { hotStoreOpen, openHotStore } from '../../src/store/lmdb';
import { answersQuery, openSqlite } from '../../src/store/sqlite';
import { migrateAll } from '../../src/capabilities';
import { VERSION } from '../../src/version';
import { tempDataDir } from '../helpers/server';

t.test('both stores are checked for real', async (t) => {
  const dir = tempDataDir('perch-ready-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openSqlite(dir);
  const unmigrated = answersQuery(db);
  migrateAll(db);
  const hot = openHotStore(dir);
  t.equal(unmigrated, false, 'a database without the schema does not answer');
  t.equal(answersQuery(db), true);
  t.equal(hotStoreOpen(hot), true);
  db.close();
  await hot.close();
  t.equal(answersQuery(db), false, 'a closed database');
  t.equal(hotStoreOpen(hot), false, 'a closed hot store');
});

t.test('the route: 200 ready with the version, else 503 unavailable with Retry-After', async (t) => {
  let ready = true;
  const route = systemRoutes({ fetchAggregatedMetrics: async () => '', ready: () => ready }).find((r) => r.path === '/readyz')!;
  const ok = await route.handler({} as Ctx);
  t.equal(ok.status, 200);
  t.same(JSON.parse(String(ok.body)), { status: 'ready', version: VERSION });
  t.match(VERSION, /^\d+\.\d+\.\d+/);
  ready = false;
  let thrown: unknown;
  try {
    await route.handler({} as Ctx);
  } catch (err) {
    thrown = err;
  }
  t.ok(thrown instanceof HttpError);
  const reply = errorReply(thrown, '1-a', {});
  t.equal(reply.status, 503);
  t.same(reply.json, { error: 'unavailable', message: 'The stores are not ready; try again shortly.', retry_after_seconds: 5 });
  t.equal(reply.headers?.['Retry-After'], '5');
});
