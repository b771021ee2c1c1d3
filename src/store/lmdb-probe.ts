// Run as a child process by openHotStore (store/lmdb.ts) with `repair`: reads every entry of every
// database of the LMDB environment at argv[2], then commits one small write transaction (which
// goes through the free-page list). Damage LMDB detects exits with PROBE_FOUND_DAMAGE and the
// error on the last line of stdout; damage it does not detect kills this process by a signal,
// which the parent sees. Exit 0: everything was readable.
import { open } from 'lmdb';
import { PROBE_FOUND_DAMAGE, isLmdbDamageError, namedDatabases } from './lmdb';

function probe(path: string): void {
  const root = open({ path, maxDbs: 64, noSync: true, compression: false });
  for (const db of namedDatabases(root)) {
    for (const entry of db.getRange({})) void entry;
  }
  const state = root.openDB({ name: 'hot_store', compression: false });
  state.transactionSync(() => {
    state.putSync('probe', process.pid);
    state.removeSync('probe');
  });
}

try {
  probe(process.argv[2]);
  process.exit(0);
} catch (err) {
  if (isLmdbDamageError(err)) {
    process.stdout.write(`${(err as Error).message}\n`);
    process.exit(PROBE_FOUND_DAMAGE);
  }
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
