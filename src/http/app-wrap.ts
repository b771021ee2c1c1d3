// What applies to every request whatever its route, added around the handlers the router (and any
// capability) registers on the uWS app, so that routes stay unaware of it: CORS preflights and
// headers (http/cors.ts) and the access log (`log.access`, WebSocket upgrades included). Nothing
// is wrapped that has nothing to add: with CORS off and no access log, only the router's
// catch-all handlers (404, 405) are, to answer preflights, and the hot paths are registered
// exactly as they were.
import type { HttpRequest, HttpResponse, RecognizedString, TemplatedApp, WebSocketBehavior } from 'uWebSockets.js';
import { log } from '../log';
import { clientIp } from './client-ip';
import { isPreflight, type CorsPolicy } from './cors';

type Handler = (res: HttpResponse, req: HttpRequest) => unknown;

export interface AppWrapOptions {
  cors: CorsPolicy;
  /** Write one log line per answered request (log.access). */
  accessLog: boolean;
  trustedProxies: ReadonlySet<string>;
  /** Counts preflights in the request metrics (router.ts counts the rest). */
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** The methods of a uWS app that register a handler for a pattern. */
const REGISTERS = new Set(['get', 'post', 'put', 'patch', 'del', 'head', 'options', 'any', 'connect', 'trace']);

/** An app that registers every handler wrapped (see above); everything else goes to `app`. */
export function wrapApp(app: TemplatedApp, opts: AppWrapOptions): TemplatedApp {
  const wrapped: TemplatedApp = new Proxy(app, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'ws') {
        return (pattern: RecognizedString, behavior: WebSocketBehavior<unknown>) => {
          value.call(target, pattern, wrapBehavior(behavior, opts));
          return wrapped;
        };
      }
      if (typeof prop !== 'string' || !REGISTERS.has(prop)) return value.bind(target);
      return (pattern: RecognizedString, handler: Handler) => {
        value.call(target, pattern, wrapHandler(handler, prop === 'any', opts));
        return wrapped;
      };
    },
  });
  return wrapped;
}

function wrapHandler(handler: Handler, catchAll: boolean, opts: AppWrapOptions): Handler {
  const { cors, accessLog, trustedProxies } = opts;
  // Only `any` handlers see OPTIONS: no route registers that method.
  if (!catchAll && !cors.enabled && !accessLog) return handler;
  return (res, req) => {
    if (catchAll && isPreflight(req.getMethod(), req.getUrl())) {
      preflight(res, req, opts);
      return;
    }
    if (!cors.enabled && !accessLog) return handler(res, req);
    const origin = cors.enabled ? req.getHeader('origin') : '';
    decorate(res, cors.answerHeaders(origin), accessLog ? startEntry(res, req, trustedProxies) : null);
    return handler(res, req);
  };
}

/**
 * A WebSocket route's upgrade handler, logged like any request when the access log is on: 101 once
 * upgraded, or the status of the answer it gave instead (a 401). CORS does not apply: browsers send
 * no preflight for a WebSocket, and the server checks the key, not the origin.
 */
function wrapBehavior(behavior: WebSocketBehavior<unknown>, opts: AppWrapOptions): WebSocketBehavior<unknown> {
  const upgrade = behavior.upgrade;
  if (!opts.accessLog || !upgrade) return behavior;
  return {
    ...behavior,
    upgrade: (res, req, context) => {
      decorate(res, null, startEntry(res, req, opts.trustedProxies));
      return upgrade(res, req, context);
    },
  };
}

interface AccessEntry {
  method: string;
  path: string;
  ip: string;
  started: number;
}

const decoder = new TextDecoder();

function startEntry(res: HttpResponse, req: HttpRequest, trusted: ReadonlySet<string>): AccessEntry {
  let ip = decoder.decode(res.getRemoteAddressAsText());
  if (trusted.size !== 0) ip = clientIp(ip, req.getHeader('x-forwarded-for'), trusted);
  // The path only: a query string can carry a credential (`/ws?access_token=`).
  return { method: req.getMethod().toUpperCase(), path: req.getUrl(), ip, started: performance.now() };
}

function writeAccess(entry: AccessEntry, status: number): void {
  log.access({ method: entry.method, path: entry.path, status, ms: Math.round((performance.now() - entry.started) * 100) / 100, ip: entry.ip });
}

/** The status code at the start of a status line, however uWS was given it. */
export function statusOf(line: RecognizedString): number {
  const text = typeof line === 'string' ? line : Buffer.from(ArrayBuffer.isView(line) ? new Uint8Array(line.buffer, line.byteOffset, line.byteLength) : new Uint8Array(line)).toString('latin1');
  const n = parseInt(text, 10);
  return Number.isNaN(n) ? 200 : n;
}

/**
 * Adds headers right after the status line (or before the first header or the end, for a handler
 * that leaves the status at uWS's implicit 200), and writes the access line once the answer ends.
 */
function decorate(res: HttpResponse, headers: ReadonlyArray<readonly [string, string]> | null, entry: AccessEntry | null): void {
  const r = res as unknown as Record<string, (...args: any[]) => any>;
  const { writeStatus, writeHeader, end, endWithoutBody, tryEnd, write, upgrade, close, onAborted } = r;
  let status = 200;
  let statusWritten = false;
  let pending = headers;
  let finished = false;
  const addHeaders = () => {
    if (pending === null) return;
    const list = pending;
    pending = null;
    for (const [k, v] of list) writeHeader.call(res, k, v);
  };
  const finish = (code: number) => {
    if (finished) return;
    finished = true;
    if (entry) writeAccess(entry, code);
  };
  r.writeStatus = (line: RecognizedString) => {
    writeStatus.call(res, line);
    status = statusOf(line);
    statusWritten = true;
    addHeaders();
    return res;
  };
  r.writeHeader = (key: RecognizedString, value: RecognizedString) => {
    addHeaders();
    return writeHeader.call(res, key, value);
  };
  r.write = (chunk: RecognizedString) => {
    addHeaders();
    return write.call(res, chunk);
  };
  r.end = (...args: unknown[]) => {
    addHeaders();
    const out = end.apply(res, args);
    finish(status);
    return out;
  };
  r.endWithoutBody = (...args: unknown[]) => {
    addHeaders();
    const out = endWithoutBody.apply(res, args);
    finish(status);
    return out;
  };
  r.tryEnd = (...args: unknown[]) => {
    addHeaders();
    const out = tryEnd.apply(res, args) as [boolean, boolean];
    if (out[1]) finish(status);
    return out;
  };
  r.upgrade = (...args: unknown[]) => {
    // A WebSocket: CORS does not apply (browsers send no preflight for it), the log says 101.
    pending = null;
    const out = upgrade.apply(res, args);
    finish(101);
    return out;
  };
  r.close = () => {
    const out = close.call(res);
    // Closed before a status was written: the client got nothing, logged as nginx does.
    finish(statusWritten ? status : 499);
    return out;
  };
  r.onAborted = (handler: () => void) =>
    onAborted.call(res, () => {
      finish(499);
      handler();
    });
}

function preflight(res: HttpResponse, req: HttpRequest, opts: AppWrapOptions): void {
  const started = performance.now();
  const entry = opts.accessLog ? startEntry(res, req, opts.trustedProxies) : null;
  const origin = opts.cors.enabled ? req.getHeader('origin') : '';
  res.writeStatus('204 No Content');
  for (const [k, v] of opts.cors.preflightAnswerHeaders(origin) ?? []) res.writeHeader(k, v);
  res.endWithoutBody();
  opts.observe('preflight', 'OPTIONS', 204, (performance.now() - started) / 1000);
  if (entry) writeAccess(entry, 204);
}
