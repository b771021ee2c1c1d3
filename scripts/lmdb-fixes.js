// The changes perch makes to the LMDB that lmdb-js bundles (docs/architecture.md, "A damaged hot
// store"), as pure functions of the C source (mdb.c), so that a test can hold each one to the
// source it is applied to. scripts/build-lmdb.js compiles the result.
'use strict';

class FixError extends Error {
  name = 'FixError';
}

/** The statement as lmdb-js ships it, inside mdb_env_open2(MDB_env *env, int prev). */
const UNGUARDED = '\n\tif (env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
/** Upstream LMDB's statement: only an open that restores the previous snapshot sets the counter. */
const GUARDED = '\n\tif (prev && env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
/** The function the statement must be in: the guard names its parameter. */
const OPEN2 = /\nmdb_env_open2\(MDB_env \*env, int prev\)\n\{/g;

/**
 * The open's counter store. lmdb-js's mdb_env_open2 ends every open of an environment by storing
 * the transaction id it read from the meta page into the lock file's shared counter, without the
 * write lock. Upstream LMDB stores it only for an MDB_PREVSNAPSHOT open, which lmdb-js allows only
 * to the first process (the one that holds the lock file exclusively). When another process
 * commits between the opener's read and that store, the counter goes back by one, and the next
 * write transaction reuses the id of the last one: it fails, or commits over the snapshot before
 * it and loses that transaction, or crashes.
 *
 * Throws FixError unless the source has exactly one mdb_env_open2 and exactly one unguarded store,
 * inside it: another lmdb version needs a new look, not a guess.
 */
function withOpenFix(source) {
  const opens = [...source.matchAll(OPEN2)];
  if (opens.length !== 1) throw new FixError(`expected one definition of mdb_env_open2(MDB_env *env, int prev), found ${opens.length}`);
  const start = opens[0].index;
  const end = source.indexOf('\n}\n', start);
  const stores = source.split(UNGUARDED).length - 1;
  if (stores !== 1) throw new FixError(`expected the unguarded transaction id store once, found it ${stores} times`);
  const at = source.indexOf(UNGUARDED);
  if (at < start || at > end) throw new FixError('the unguarded transaction id store is not in mdb_env_open2');
  return source.slice(0, at) + GUARDED + source.slice(at + UNGUARDED.length);
}

/** lmdb-js formats its error details into buffers it allocates with malloc(N), N at least this. */
const ERROR_BUFFER_BYTES = 100;
const UNBOUNDED = 'sprintf(last_error, ';
const BOUNDED = `snprintf(last_error, ${ERROR_BUFFER_BYTES}, `;

/**
 * The error details. lmdb-js writes the detail of an error into `last_error = malloc(100)` with
 * sprintf; some details are longer. A failed page write on a full disk formats
 * "Attempting to write page at position %u, size %u, blocks %u, buffer sizes %i %i %i", which
 * with large numbers overruns the buffer and corrupts the heap (seen: `malloc(): invalid size`,
 * SIGABRT, right after `No space left on device`). Each is bounded to the buffer's size; a
 * longer detail is cut short.
 *
 * Throws FixError unless every such buffer is at least ERROR_BUFFER_BYTES and there is at least
 * one call to bound.
 */
function withBoundedErrors(source) {
  const sizes = [...source.matchAll(/last_error = malloc\((\d+)\);/g)].map((m) => Number(m[1]));
  const small = sizes.filter((n) => n < ERROR_BUFFER_BYTES);
  if (small.length > 0) throw new FixError(`an error buffer smaller than ${ERROR_BUFFER_BYTES} bytes: ${small.join(', ')}`);
  const calls = source.split(UNBOUNDED).length - 1;
  if (calls === 0) throw new FixError('no unbounded error detail found');
  return source.split(UNBOUNDED).join(BOUNDED);
}

/** Every fix, by the name scripts/build-lmdb.js records beside the addon it builds. */
const FIXES = [
  ['open-txnid', withOpenFix],
  ['bounded-error-details', withBoundedErrors],
];

function withFixes(source) {
  return FIXES.reduce((s, [, fix]) => fix(s), source);
}

module.exports = { FIXES, FixError, withBoundedErrors, withFixes, withOpenFix };
