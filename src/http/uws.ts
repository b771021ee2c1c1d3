// Loads uWebSockets.js and insists on its native binary. The package silently falls back to a
// slow, partial JavaScript shim when the binary does not load; perch refuses to run on it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';

export class UwsUnavailableError extends Error {}

let loaded: typeof Uws | undefined;

/** The Node.js major version perch is built and tested for (package.json, engines). */
export const SUPPORTED_NODE_MAJOR = 20;

/**
 * Why uWebSockets.js cannot load natively here, before trying: the package has binaries for a
 * few Node ABIs only, and without one it would fall back to its shim (refused below) with a
 * message about a missing `uws_linux_x64_127.node` rather than about the Node version.
 */
function unsupportedRuntime(): string | null {
  const { node, modules } = process.versions;
  const binary = `uws_${process.platform}_${process.arch}_${modules}.node`;
  const hasBinary = existsSync(join(dirname(require.resolve('uWebSockets.js')), '..', 'binaries', binary));
  if (Number(node.split('.')[0]) !== SUPPORTED_NODE_MAJOR) {
    return `perch needs Node ${SUPPORTED_NODE_MAJOR} (this is Node ${node}${hasBinary ? '' : `, for which uWebSockets.js has no native binary`})`;
  }
  if (!hasBinary) return `uWebSockets.js has no native binary for ${process.platform}-${process.arch} (${binary}); perch runs on Linux, macOS or Windows on x64 or arm64`;
  return null;
}

export function loadNativeUws(): typeof Uws {
  if (loaded) return loaded;
  const unsupported = unsupportedRuntime();
  if (unsupported) throw new UwsUnavailableError(unsupported);
  const flag = process.env.UWS_USE_FALLBACK;
  if (flag && /^(1|true)$/i.test(flag)) {
    throw new UwsUnavailableError('uWebSockets.js native binary disabled by UWS_USE_FALLBACK; perch does not run on the JavaScript fallback');
  }
  // The package writes its fallback warning to the console; keep it off our structured output.
  const warn = console.warn;
  let warning = '';
  console.warn = (...args: unknown[]) => {
    warning += args.map(String).join(' ');
  };
  let mod: typeof Uws;
  try {
    mod = require('uWebSockets.js') as typeof Uws;
  } finally {
    console.warn = warn;
  }
  if (!String(mod.App).includes('[native code]')) {
    const reason = warning.split('\n').find((l) => l.trim() && !l.startsWith('This version')) ?? 'unknown reason';
    throw new UwsUnavailableError(`uWebSockets.js native binary did not load for Node ${process.versions.node} (${process.platform}-${process.arch}, ABI ${process.versions.modules}): ${reason.trim()}`);
  }
  loaded = mod;
  return mod;
}
