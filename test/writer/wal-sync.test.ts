// The writer's pipelined log sync: a commit is acknowledged only by a sync that started after it,
// syncs never overlap, callbacks run in commit order, and a failed sync reaches every commit it
// was meant to cover.
import t, { type Test } from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';
import { openSqlite, walPath } from '../../src/store/sqlite';
import { migrateAll } from '../../src/capabilities';
import { WalSync } from '../../src/writer/wal-sync';

/** A WalSync over a file with frames in it, in a temporary directory removed after the test. */
function walOverFile(t: Test, prefix: string): WalSync {
  const dir = tempDataDir(prefix);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'log');
  writeFileSync(file, 'frames');
  return new WalSync(file);
}

t.test('commits made while a sync runs wait for the next one', async (t) => {
  const wal = walOverFile(t, 'perch-walsync-');
  const order: string[] = [];
  wal.afterCommit((err) => order.push(`a:${err}`)); // starts sync 1
  wal.afterCommit((err) => order.push(`b:${err}`)); // sync 1 already runs: waits for sync 2
  wal.afterCommit((err) => order.push(`c:${err}`));
  t.same(order, [], 'nothing is acknowledged before a sync completes');
  await wal.drained();
  t.same(order, ['a:null', 'b:null', 'c:null']);
  t.equal(wal.syncs, 2, 'one sync for the first commit, one for the two made during it');
  await wal.drained(); // idle: resolves at once
  wal.close();
});

t.test('a commit put off while a sync runs is made when it ends, and the next sync covers it', async (t) => {
  const wal = walOverFile(t, 'perch-walsync-free-');
  const order: string[] = [];
  t.notOk(wal.busy);
  wal.whenFree(() => order.push('now'));
  t.same(order, ['now'], 'no sync runs: at once');
  wal.afterCommit((err) => order.push(`a:${err}`)); // starts sync 1
  t.ok(wal.busy);
  const commit = (name: string) => () => {
    order.push(name);
    wal.afterCommit((err) => order.push(`${name} synced:${err}`));
  };
  wal.whenFree(commit('b'));
  wal.whenFree(commit('c')); // one waits at a time: the latest
  t.same(order, ['now'], 'put off while the sync runs');
  await wal.drained();
  t.same(order, ['now', 'a:null', 'c', 'c synced:null'], 'made once sync 1 ended, before sync 2, which covered it');
  t.equal(wal.syncs, 2);
  t.notOk(wal.busy);
  wal.close();
});

t.test('the log of a real database, synced after commits made with synchronous=NORMAL', async (t) => {
  const dir = tempDataDir('perch-walsync-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openSqlite(dir);
  migrateAll(db);
  db.pragma('synchronous = NORMAL');
  const wal = new WalSync(walPath(dir));
  const acked: number[] = [];
  for (let i = 0; i < 5; i++) {
    db.prepare("INSERT INTO users (id, handle, handle_lower, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00.000Z')").run(`u${i}`, `h${i}`, `h${i}`);
    wal.afterCommit((err) => {
      t.equal(err, null);
      acked.push(i);
    });
  }
  await wal.drained();
  t.same(acked, [0, 1, 2, 3, 4]);
  t.ok(wal.syncs >= 1 && wal.syncs <= 2, `syncs: ${wal.syncs}`);
  wal.close();
  db.close();
});

t.test('a sync that cannot run fails every commit it covers', async (t) => {
  const dir = tempDataDir('perch-walsync-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const wal = new WalSync(join(dir, 'missing-log'));
  const errors: Array<Error | null> = [];
  wal.afterCommit((err) => errors.push(err));
  wal.afterCommit((err) => errors.push(err));
  await wal.drained();
  t.equal(errors.length, 2);
  for (const err of errors) t.match(err, { code: 'ENOENT' });
  t.equal(wal.syncs, 0);
  // Even once the log exists again, nothing later is called durable: the failure sticks.
  writeFileSync(join(dir, 'missing-log'), 'now here');
  wal.afterCommit((err) => errors.push(err));
  await wal.drained();
  t.equal(errors.length, 3);
  t.match(errors[2], { code: 'ENOENT' });
  t.equal(wal.syncs, 0);
});
