// The server lock: held by each server process for its life, seen by any process without waiting,
// shared by several servers at once, and gone with its holder however the holder ends.
import t from 'tap';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';
import { serverLockHolder } from '../helpers/lock-holder';
import { SERVER_LOCK_FILE, holdServerLock, serverRunsOn } from '../../src/store/server-lock';

function dataDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = tempDataDir('perch-serve-lock-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('no server ever ran: no lock, and looking makes no file', async (t) => {
  const dir = dataDir(t);
  t.equal(serverRunsOn(dir), false);
  t.notOk(existsSync(join(dir, SERVER_LOCK_FILE)));
});

t.test('held in this process: seen until released, and again free after', async (t) => {
  const dir = dataDir(t);
  const lock = holdServerLock(dir);
  t.equal(serverRunsOn(dir), true);
  t.equal(serverRunsOn(dir), true, 'a look gives the lock back: a second look sees the same');
  lock.release();
  lock.release();
  t.equal(serverRunsOn(dir), false);
});

t.test('held by another process: seen at once, shared with a second holder, gone with a killed holder', async (t) => {
  const dir = dataDir(t);
  const first = serverLockHolder(dir);
  await first.held;
  const started = Date.now();
  t.equal(serverRunsOn(dir), true);
  t.ok(Date.now() - started < 1000, 'the look does not wait');
  const second = holdServerLock(dir);
  t.equal(serverRunsOn(dir), true);
  second.release();
  t.equal(serverRunsOn(dir), true, 'the other holder still holds it');
  await first.kill();
  t.equal(serverRunsOn(dir), false, 'a SIGKILL ends the lock with its process');
});
