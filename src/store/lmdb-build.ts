// Which native addon of lmdb-js this process runs: perch's build, made by `npm install` from the
// package's own sources with the open fix (scripts/build-lmdb.js), or one of the prebuilt binaries
// lmdb-js falls back to when that build is missing (installed with --ignore-scripts, say), which
// have the fault the fix removes (docs/architecture.md, "Opening the hot store beside a writing
// process"). The server says so in its log when it runs without the fix.
import 'lmdb';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Written beside the addon by scripts/build-lmdb.js. */
const BUILD_MARKER = 'perch-build.json';
/** The fix scripts/build-lmdb.js records in its marker. */
const OPEN_FIX = 'open-txnid';

export interface LmdbAddon {
  /** The addon file this process loaded; undefined if none was found among its modules. */
  path: string | undefined;
  /** True when that file is perch's build with the open fix. */
  openFix: boolean;
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
  let openFix = false;
  if (path === ours) {
    try {
      openFix = (JSON.parse(readFileSync(join(dirname(ours), BUILD_MARKER), 'utf8')) as { fix?: string }).fix === OPEN_FIX;
    } catch {
      // No marker: a build of lmdb-js's own (npm rebuild --build-from-source), without the fix.
    }
  }
  return { path, openFix };
}
