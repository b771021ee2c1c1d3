// Which native addon of lmdb-js this process runs: perch's build, made by `npm install` from the
// package's own sources with perch's fixes to LMDB (scripts/build-lmdb.js), or one of the prebuilt
// binaries lmdb-js falls back to when that build is missing (installed with --ignore-scripts,
// say), which have the faults the fixes remove (docs/architecture.md, "A damaged hot store"). The
// server says so in its log when it runs without them.
import 'lmdb';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Written beside the addon by scripts/build-lmdb.js. */
const BUILD_MARKER = 'perch-build.json';
/** The fixes scripts/build-lmdb.js records in its marker (scripts/lmdb-fixes.js). */
const FIXES = ['open-txnid', 'bounded-error-details'];

export interface LmdbAddon {
  /** The addon file this process loaded; undefined if none was found among its modules. */
  path: string | undefined;
  /** True when that file is perch's build with every one of perch's fixes. */
  fixed: boolean;
}

/** The folder of the installed lmdb package: its "exports" hide its package.json from require. */
function lmdbPackageDir(): string {
  let dir = dirname(require.resolve('lmdb'));
  while (!existsSync(join(dir, 'package.json')) || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== 'lmdb') {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the folder of the lmdb package');
    dir = up;
  }
  return dir;
}

export function loadedLmdbAddon(): LmdbAddon {
  const ours = join(lmdbPackageDir(), 'build', 'Release', 'lmdb.node');
  // lmdb-js loads its addon with require, so the file it chose is among this thread's modules.
  const loaded = Object.keys(require.cache).filter((p) => p.endsWith('.node'));
  const path = loaded.find((p) => p === ours) ?? loaded.find((p) => p.includes(`${sep}lmdb${sep}`) || p.includes(`${sep}@lmdb${sep}`));
  let fixed = false;
  if (path === ours) {
    try {
      const built = (JSON.parse(readFileSync(join(dirname(ours), BUILD_MARKER), 'utf8')) as { fixes?: unknown }).fixes;
      fixed = Array.isArray(built) && FIXES.every((f) => built.includes(f));
    } catch {
      // No marker: a build of lmdb-js's own (npm rebuild --build-from-source), without the fixes.
    }
  }
  return { path, fixed };
}
