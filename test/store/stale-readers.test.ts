// A process killed while it held a read transaction leaves its reader slot behind, and with it a
// snapshot that keeps LMDB from reusing any page freed since: clearStaleReaders frees the slot,
// after which writes that free as much as they add reuse the freed pages.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';
import { clearStaleReaders, openHotStore } from '../../src/store/lmdb';

const LMDB = require.resolve('lmdb');

/** Rewrites the same 200 values of 2 KiB `rounds` times, each round one transaction. */
function churn(hot: ReturnType<typeof openHotStore>, rounds: number): void {
  const db = hot.db<Buffer, number>('churn', { encoding: 'binary' });
  for (let r = 0; r < rounds; r++) {
    db.transactionSync(() => {
      for (let i = 0; i < 200; i++) db.putSync(i, Buffer.alloc(2048, r & 0xff));
    });
  }
}

t.test('a killed reader pins pages until its slot is cleared', async (t) => {
  const dir = tempDataDir('perch-readers-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hot = openHotStore(dir);
  t.teardown(() => hot.close());
  churn(hot, 5);
  // A child opens the same environment, reads (taking a snapshot), and dies without closing it.
  const child = spawnSync(process.execPath, [
    '-e',
    `const { open } = require(${JSON.stringify(LMDB)});
     const root = open({ path: ${JSON.stringify(join(dir, 'lmdb'))}, maxDbs: 64, noSync: true, compression: false });
     root.openDB({ name: 'churn', encoding: 'binary', compression: false }).get(0);
     process.kill(process.pid, 'SIGKILL');`,
  ]);
  t.equal(child.signal, 'SIGKILL', 'the reader died holding its snapshot');
  const usedPages = () => (hot.root.getStats() as { lastPageNumber: number }).lastPageNumber;

  const pinnedBefore = usedPages();
  churn(hot, 20);
  const pinnedGrowth = usedPages() - pinnedBefore;
  t.ok(pinnedGrowth >= 20 * 100, `with the slot pinned, every round takes new pages (${pinnedGrowth} pages)`);

  t.equal(clearStaleReaders(hot), 1, 'the dead process\'s slot is freed');
  t.equal(clearStaleReaders(hot), 0, 'and only once');
  hot.root.resetReadTxn();
  churn(hot, 3);
  const settled = usedPages();
  churn(hot, 20);
  t.ok(usedPages() - settled < pinnedGrowth / 10, `afterwards freed pages are reused (${usedPages() - settled} new pages for 20 rounds)`);
});
