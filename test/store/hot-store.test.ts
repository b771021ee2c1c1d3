// openHotStore on a damaged LMDB environment: without repair it refuses with a clear error and
// touches nothing; with repair it moves the environment aside, starts an empty one and records
// that a rebuild is pending until markRebuilt. Opens of several processes take turns, and a
// process killed during its turn does not hold up the next. And the flag mirror rebuilt from
// SQLite.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';
import { tempStore, addUsers } from '../helpers/store';
import { HotStoreDamagedError, OPEN_LOCK_FILE, openHotStore, type Repair } from '../../src/store/lmdb';
import { SERVER_LOCK_FILE } from '../../src/store/server-lock';
import { openLockHolder, serverLockHolder } from '../helpers/lock-holder';
import { openFlagMirror, rebuildFlagMirror } from '../../src/links/anomaly';
import { LinkStore } from '../../src/links/store';

t.test('the probe, a process of its own at every check, loads lmdb-js and none of the other stores', async (t) => {
  const script = `require(${JSON.stringify(require.resolve('../../src/store/lmdb-env'))});
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const files = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
  t.ok(files.some((f) => f.includes('/node_modules/lmdb/')), 'lmdb-js');
  t.notOk(files.some((f) => f.includes('/node_modules/better-sqlite3/')), 'not SQLite');
  t.same(files.filter((f) => f.includes('/dist/src/')).map((f) => f.replace(/.*\/dist\//, '')), ['src/store/lmdb-env.js'], 'no other module of perch');
});

function dataDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = tempDataDir('perch-hot-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function seeded(dir: string): Promise<void> {
  const hot = openHotStore(dir);
  hot.db<string, string>('things').putSync('kept', 'yes');
  await hot.close();
}

function zeroHeader(dir: string): void {
  const fd = openSync(join(dir, 'lmdb', 'data.mdb'), 'r+');
  writeSync(fd, Buffer.alloc(4096), 0, 4096, 0);
  closeSync(fd);
}

t.test('a healthy store opens as it is, with or without repair', async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  const repairs: Repair[] = [];
  const hot = openHotStore(dir, { repair: true, onRepaired: (r) => repairs.push(r) });
  t.equal(hot.db<string, string>('things').get('kept'), 'yes');
  t.equal(hot.recovered, false);
  t.same(repairs, []);
  await hot.close();
  t.same(readdirSync(dir).sort(), ['lmdb', OPEN_LOCK_FILE]);
});

t.test('without repair, a damaged header is an error naming it, and nothing is touched', async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  zeroHeader(dir);
  t.throws(() => openHotStore(dir), new HotStoreDamagedError(`the hot store in ${join(dir, 'lmdb')} is damaged (page 0 is not a meta page); perch serve replaces it`));
  t.same(readdirSync(dir).sort(), ['lmdb', OPEN_LOCK_FILE]);
});

t.test('with repair, a damaged store is moved aside once, and the rebuild stays pending until done', async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  zeroHeader(dir);
  const repairs: Repair[] = [];
  const hot = openHotStore(dir, { repair: true, onRepaired: (r) => repairs.push(r) });
  t.equal(repairs.length, 1, 'told once');
  t.equal(repairs[0].reason, 'page 0 is not a meta page');
  t.match(repairs[0].movedTo, /lmdb\.damaged-\d{8}T\d{6}Z$/);
  t.ok(existsSync(join(repairs[0].movedTo, 'data.mdb')), 'the damaged files are kept aside');
  t.equal(hot.db<string, string>('things').get('kept'), undefined, 'the new store is empty');
  t.equal(hot.recovered, true);
  await hot.close();

  // A command that repaired leaves the rebuild to the next opener.
  const again = openHotStore(dir, { repair: true, onRepaired: (r) => repairs.push(r) });
  t.equal(repairs.length, 1, 'the new store is healthy: no second repair');
  t.equal(again.recovered, true, 'still pending');
  again.markRebuilt();
  t.equal(again.recovered, false);
  await again.close();
  const last = openHotStore(dir);
  t.equal(last.recovered, false);
  await last.close();
});

t.test("an open waits for another process's open to finish", async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  const marker = join(dir, 'let-go');
  const holder = openLockHolder(dir, marker, 300);
  await holder.held;
  const hot = openHotStore(dir, { repair: true });
  t.ok(existsSync(marker), 'it opened only once the other process had let go');
  t.equal(hot.db<string, string>('things').get('kept'), 'yes');
  await hot.close();
  await holder.exited;
});

t.test('a process killed during its open does not hold up the next one', async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  const holder = openLockHolder(dir, join(dir, 'never'));
  await holder.held;
  await holder.kill();
  const hot = openHotStore(dir, { repair: true });
  t.equal(hot.db<string, string>('things').get('kept'), 'yes', 'opened at once: the lock ended with its process');
  t.notOk(existsSync(join(dir, 'never')));
  await hot.close();
});

t.test('rebuildFlagMirror puts back every active flag, and only those', async (t) => {
  const { dir, db } = tempStore(t, 'perch-flags-');
  addUsers(db, { '11': 'active', '12': 'ended', '13': 'cleared' });
  const store = new LinkStore(db);
  const now = 1_800_000_000_000;
  store.raiseFlag('11', 'many links', now - 1000, now + 600_000);
  store.raiseFlag('12', 'many links', now - 700_000, now - 100_000);
  store.raiseFlag('13', 'many links', now - 1000, now + 600_000);
  store.clearFlag('13', now - 500);
  const hot = openHotStore(dir);
  t.teardown(() => hot.close());
  const mirror = openFlagMirror(hot);
  t.equal(rebuildFlagMirror(store, mirror, now), 1);
  t.same([...mirror.getRange({})].map(({ key, value }) => [key, value]), [['11', now + 600_000]]);
});

t.test('with repair, a damaged store under a running server is left in place, named as such', async (t) => {
  const dir = dataDir(t);
  await seeded(dir);
  zeroHeader(dir);
  const server = serverLockHolder(dir);
  await server.held;
  const repairs: Repair[] = [];
  t.throws(
    () => openHotStore(dir, { repair: true, onRepaired: (r) => repairs.push(r) }),
    new HotStoreDamagedError(
      `the hot store in ${join(dir, 'lmdb')} looks damaged (page 0 is not a meta page), and a server is running on ${dir}: stop it, then start it again (perch serve replaces a damaged hot store as it starts)`,
    ),
  );
  t.same(repairs, []);
  t.same(readdirSync(dir).sort(), ['lmdb', OPEN_LOCK_FILE, SERVER_LOCK_FILE], 'nothing moved aside');
  await server.kill();
  const hot = openHotStore(dir, { repair: true, onRepaired: (r) => repairs.push(r) });
  t.equal(repairs.length, 1, 'repaired once the server is gone');
  t.equal(hot.recovered, true);
  await hot.close();
});
