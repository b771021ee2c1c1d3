// Loads uWebSockets.js and insists on its native binary. The package silently falls back to a
// slow, partial JavaScript shim when the binary does not load; perch refuses to run on it.
import type * as Uws from 'uWebSockets.js';

export class UwsUnavailableError extends Error {}

let loaded: typeof Uws | undefined;

export function loadNativeUws(): typeof Uws {
  if (loaded) return loaded;
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
