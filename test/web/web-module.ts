// Loads a module of the web client's source (web/src/) into the test process: esbuild bundles it
// as CommonJS in memory, as the client's build bundles it for the browser. For the client's pure
// modules only (no DOM).
import { join } from 'node:path';
import { ROOT } from '../helpers/server';

export function loadWebModule<T>(path: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({
    entryPoints: [join(ROOT, 'web', path)],
    bundle: true,
    format: 'cjs',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
  });
  const module = { exports: {} as T };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('module', 'exports', out.outputFiles[0].text)(module, module.exports);
  return module.exports;
}
