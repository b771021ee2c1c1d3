// Run as a child process by openHotStore (store/lmdb.ts) with `repair`: reads every entry of every
// database of the LMDB environment at argv[2], then commits one small write transaction (which
// goes through the free-page list). Once the environment is open, any error is damage (LMDB's own
// codes, or a garbage key that decodes into something no database name can be): it is reported
// on a PROBE_DAMAGE_LINE of stdout and the exit code is PROBE_FOUND_DAMAGE. Damage LMDB does not
// detect kills this process by a signal, which the parent sees. Exit 0: everything was readable.
import type { RootDatabase } from 'lmdb';
import { PROBE_DAMAGE_LINE, PROBE_FOUND_DAMAGE, isLmdbDamageError, namedDatabases, openRoot } from './lmdb-env';

function damaged(err: unknown): never {
  process.stdout.write(`${PROBE_DAMAGE_LINE}${(err as Error)?.message ?? String(err)}\n`);
  process.exit(PROBE_FOUND_DAMAGE);
}

function readAll(root: RootDatabase): void {
  for (const db of namedDatabases(root)) {
    for (const entry of db.getRange({})) void entry;
  }
  const state = root.openDB({ name: 'hot_store', compression: false });
  state.transactionSync(() => {
    state.putSync('probe', process.pid);
    state.removeSync('probe');
  });
}

let root: RootDatabase;
try {
  root = openRoot(process.argv[2]);
} catch (err) {
  if (isLmdbDamageError(err)) damaged(err);
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
try {
  readAll(root);
} catch (err) {
  damaged(err);
}
// Closed before the exit: a process that ends with a read transaction open leaves its slot in
// the reader table to the writers beside it, and lmdb-js's free-page list has been seen to fail a
// writer's commits after such exits (docs/architecture.md, "A damaged hot store").
root.close().then(
  () => process.exit(0),
  () => process.exit(0),
);
