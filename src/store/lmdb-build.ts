// Which native addon of lmdb-js this process runs: perch's build, made by `npm install` from the
// package's own sources with perch's fixes to LMDB (scripts/build-lmdb.js), or one of the prebuilt
// binaries lmdb-js falls back to when that build is missing (installed with --ignore-scripts,
// say), which have the faults the fixes remove (docs/architecture.md, "A damaged hot store"). The
// server says so in its log when it runs without them.
import 'lmdb';
import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Written beside the addon by scripts/build-lmdb.js. */
const BUILD_MARKER = 'perch-build.json';
/**
 * The fixes scripts/build-lmdb.js records in its marker, by name (scripts/lmdb-fixes.js, which the
 * server's code does not load: it runs at install time; a test holds the two lists equal).
 */
export const LMDB_FIXES: readonly string[] = ['open-txnid', 'bounded-error-details'];

export interface LmdbAddon {
  /** The addon file this process loaded; undefined if none was found among its modules. */
  path: string | undefined;
  /** True when that file is perch's build with every one of perch's fixes. */
  fixed: boolean;
}

/** Where scripts/build-lmdb.js puts perch's build, inside the lmdb package's folder. */
const OURS = join(sep, 'lmdb', 'build', 'Release', 'lmdb.node');

export function loadedLmdbAddon(): LmdbAddon {
  // lmdb-js loads its addon with require, so the file it chose is among this thread's modules.
  const path = Object.keys(require.cache).find((p) => p.endsWith('.node') && (p.includes(`${sep}lmdb${sep}`) || p.includes(`${sep}@lmdb${sep}`)));
  let fixed = false;
  if (path?.endsWith(OURS)) {
    try {
      const built = (JSON.parse(readFileSync(join(dirname(path), BUILD_MARKER), 'utf8')) as { fixes?: unknown }).fixes;
      fixed = Array.isArray(built) && LMDB_FIXES.every((f) => built.includes(f));
    } catch {
      // No marker: a build of lmdb-js's own (npm rebuild --build-from-source), without the fixes.
    }
  }
  return { path, fixed };
}
