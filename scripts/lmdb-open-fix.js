// The one change perch makes to the LMDB that lmdb-js bundles (docs/architecture.md, "Opening the
// hot store beside a writing process"), as a pure function of the C source so that a test can hold
// it to the source it is applied to.
//
// lmdb-js's mdb_env_open2 ends every open of an environment by storing the transaction id it read
// from the meta page into the lock file's shared counter, without the write lock. Upstream LMDB
// stores it only for an MDB_PREVSNAPSHOT open, which lmdb-js allows only to the first process (the
// one that holds the lock file exclusively). When another process commits between the opener's
// read and that store, the counter goes back by one, and the next write transaction reuses the id
// of the last one: it fails, or commits over the snapshot before it and loses that transaction.
'use strict';

/** The statement as lmdb-js ships it, inside mdb_env_open2(MDB_env *env, int prev). */
const UNGUARDED = '\n\tif (env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
/** Upstream LMDB's statement: only an open that restores the previous snapshot sets the counter. */
const GUARDED = '\n\tif (prev && env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
/** The function the statement must be in: the guard names its parameter. */
const OPEN2 = /\nmdb_env_open2\(MDB_env \*env, int prev\)\n\{/g;

class OpenFixError extends Error {
  name = 'OpenFixError';
}

/**
 * mdb.c with the guard put back. Throws OpenFixError unless the source has exactly one
 * mdb_env_open2 and exactly one unguarded store, inside it: another lmdb version needs a new look,
 * not a guess.
 */
function withOpenFix(source) {
  const opens = [...source.matchAll(OPEN2)];
  if (opens.length !== 1) throw new OpenFixError(`expected one definition of mdb_env_open2(MDB_env *env, int prev), found ${opens.length}`);
  const start = opens[0].index;
  const end = source.indexOf('\n}\n', start);
  const stores = source.split(UNGUARDED).length - 1;
  if (stores !== 1) throw new OpenFixError(`expected the unguarded transaction id store once, found it ${stores} times`);
  const at = source.indexOf(UNGUARDED);
  if (at < start || at > end) throw new OpenFixError('the unguarded transaction id store is not in mdb_env_open2');
  return source.slice(0, at) + GUARDED + source.slice(at + UNGUARDED.length);
}

module.exports = { withOpenFix, OpenFixError };
