// uWS glue: registers route tables on a uWS app, reads what a handler needs from the stack-bound
// HttpRequest before anything asynchronous happens, reads bodies with the contract's limits,
// authenticates, and turns replies and thrown errors into responses. 404 and 405 (with Allow)
// are answered here, so capabilities only describe their routes.
import { isUtf8 } from 'node:buffer';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ZodError, type ZodType } from 'zod';
import { errorFields, log } from '../log';
import type { Principal } from '../accounts/store';
import { HttpError, STATUS_TEXT, invalidRequest, methodNotAllowed, notFound, unauthorized, type ErrorDetail } from './errors';
import { MAX_REQUEST_TARGET_BYTES, framingProblem, requestTargetLength } from './framing';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The headers routes read. Each is copied out of uWS's request before the handler runs (the
 * request object is only valid until then), so only those something reads are listed: the
 * redirect, which needs the client's address, user agent and referrer, reads them itself.
 */
export interface RequestHeaders {
  authorization: string;
  apiKey: string;
  contentType: string;
  contentLength: string;
  /** Read to check the request's framing (http/framing.ts). */
  transferEncoding: string;
  /** For conditional GETs of resources with an ETag (core/etag.ts). */
  ifNoneMatch: string;
  /** For GETs of precompressed files (the web client). */
  acceptEncoding: string;
}

export interface Ctx {
  readonly method: Method;
  readonly url: string;
  readonly query: string;
  readonly params: string[];
  readonly headers: RequestHeaders;
  /**
   * The request's number in its thread: with the thread's index, the id an unexpected error's
   * answer and log line carry (requestId), made only then.
   */
  readonly requestNo: number;
  /** Parsed JSON for `body: 'json'` routes, the raw bytes for `body: 'raw'`. */
  json: unknown;
  raw: Buffer | null;
  principal: Principal | null;
  /** The headers named in the route's `extraHeaders`, by lower-case name ('' when absent). */
  readonly extra: Record<string, string>;
  /** The peer's address as text, for routes with `remoteAddress` (else ''). */
  readonly remoteAddress: string;
}

export interface Reply {
  status: number;
  json?: unknown;
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * A body too large to hold at once (an export), produced a chunk at a time: each chunk is
   * written before the next is asked for, and none while the client is not keeping up (uWS
   * backpressure), so memory holds about one chunk. Sent with chunked transfer encoding; the
   * status and headers go out with the first chunk, so an error after that closes the connection
   * instead of answering. A HEAD gets the headers only.
   */
  stream?: Iterator<string | Buffer, void, undefined>;
}

export interface Route {
  method: Exclude<Method, 'HEAD'>;
  /** uWS pattern, e.g. `/api/posts/:id`. */
  path: string;
  /** Label for metrics; defaults to `path`. */
  name?: string;
  auth?: boolean;
  body?: 'json' | 'raw' | 'none';
  /** Limit of a raw body; JSON bodies are limited to 16 KiB. */
  maxBodyBytes?: number;
  /** Further request headers the handler reads (lower-case names), copied into `ctx.extra`. */
  extraHeaders?: readonly string[];
  /** Whether the handler needs the peer's address (`ctx.remoteAddress`). */
  remoteAddress?: boolean;
  /**
   * Headers added to every error answer of this route, including errors the glue answers itself
   * (401, 415, 413, a body that is not JSON): rate-limited endpoints show their limiter state on
   * every response. `ctx.principal` is null before the caller is authenticated. Headers the error
   * already carries win.
   */
  errorHeaders?(ctx: Ctx): Record<string, string>;
  handler(ctx: Ctx): Reply | Promise<Reply>;
}

/**
 * A route served by a raw uWS handler, for the few hot paths (the redirect) that cannot afford
 * the generic glue. It takes part in 405/Allow and in the framing check like any other route; the
 * handler must respond (and count itself in metrics) on its own.
 */
export interface RawRoute {
  method: 'GET' | 'HEAD';
  path: string;
  handler(res: HttpResponse, req: HttpRequest): void;
}

export const JSON_BODY_LIMIT = 16 * 1024;

/** What the glue needs from the thread: authentication and metrics. */
export interface RouterHooks {
  authenticate(key: string): Principal | undefined;
  observe(route: string, method: string, status: number, seconds: number): void;
  threadIndex: number;
}

let requestCounter = 0;
const textDecoder = new TextDecoder();
/**
 * Decodes a JSON body, which isUtf8 has checked, straight from uWS's ArrayBuffer (no Buffer view).
 * A byte-order mark is kept, as Buffer's toString keeps it, and JSON.parse refuses it as before.
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

const BEARER = 'Bearer';
const BEARER_SCHEME = /^\s*Bearer(\s|$)/i;
const BEARER_KEY = /^\s*Bearer\s+\S+\s*$/i;
/** The params and extra headers of a route that has none: shared, since nothing writes to them. */
const NO_PARAMS: string[] = Object.freeze([]) as unknown as string[];
const NO_EXTRA: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Header names and fixed values as bytes: uWS encodes a string argument to UTF-8 on every call,
 * and takes a Uint8Array as it is.
 */
const NAME = {
  authorization: Buffer.from('authorization'),
  apiKey: Buffer.from('x-api-key'),
  contentType: Buffer.from('content-type'),
  contentLength: Buffer.from('content-length'),
  transferEncoding: Buffer.from('transfer-encoding'),
  ifNoneMatch: Buffer.from('if-none-match'),
  acceptEncoding: Buffer.from('accept-encoding'),
};
const CONTENT_TYPE = Buffer.from('Content-Type');
const APPLICATION_JSON = Buffer.from('application/json');
const CACHE_CONTROL = Buffer.from('Cache-Control');
const NO_STORE = Buffer.from('no-store');
const CONTENT_TYPE_OPTIONS = Buffer.from('X-Content-Type-Options');
const NOSNIFF = Buffer.from('nosniff');

const statusLines = new Map<number, Buffer>();

function statusLine(status: number): Buffer {
  let line = statusLines.get(status);
  if (!line) statusLines.set(status, (line = Buffer.from(STATUS_TEXT[status] ?? String(status))));
  return line;
}

/**
 * The status line and headers of an answer, plain or streamed: the route's headers, then what
 * every answer says unless its route says otherwise: no cache stores it (API answers are a
 * user's own data, and a browser would otherwise keep them on disk for its history), and no
 * browser guesses another type than the one given (a post's text in a JSON body is never run as
 * a page). Routes whose answers may be kept (web assets, media) set their own Cache-Control.
 */
function writeHead(res: HttpResponse, reply: Reply): void {
  res.writeStatus(statusLine(reply.status));
  const headers = reply.headers;
  if (headers) for (const k in headers) res.writeHeader(k, headers[k]);
  if (headers === undefined || headers['Cache-Control'] === undefined) res.writeHeader(CACHE_CONTROL, NO_STORE);
  if (headers === undefined || headers['X-Content-Type-Options'] === undefined) res.writeHeader(CONTENT_TYPE_OPTIONS, NOSNIFF);
}

/**
 * Copies the headers a route can use out of the request (each read is a call into uWS and a new
 * string): X-Api-Key only when no Bearer header wins over it (presentedKey), If-None-Match and
 * Accept-Encoding only for reads.
 */
function readHeaders(req: HttpRequest, isGet: boolean): RequestHeaders {
  const authorization = req.getHeader(NAME.authorization);
  return {
    authorization,
    apiKey: BEARER_SCHEME.test(authorization) ? '' : req.getHeader(NAME.apiKey),
    contentType: req.getHeader(NAME.contentType),
    contentLength: req.getHeader(NAME.contentLength),
    transferEncoding: req.getHeader(NAME.transferEncoding),
    ifNoneMatch: isGet ? req.getHeader(NAME.ifNoneMatch) : '',
    acceptEncoding: isGet ? req.getHeader(NAME.acceptEncoding) : '',
  };
}

/** The answer of an action with nothing to say but that it is done. */
export const NO_CONTENT: Reply = { status: 204 };

/**
 * An authenticated action of the caller on what the path's `:id` names (a like, a follow, a
 * deletion), answered with `answer` once the action is done; its errors are the router's.
 */
export function callerAction(
  method: Route['method'],
  path: string,
  act: (userId: string, id: string) => Promise<unknown>,
  answer: Reply = NO_CONTENT,
): Route {
  return {
    method,
    path,
    auth: true,
    async handler(ctx) {
      await act(ctx.principal!.userId, ctx.params[0]);
      return answer;
    },
  };
}

/**
 * The API key of a request to a WebSocket endpoint: as on every endpoint (presentedKey), else the
 * `?access_token=` a browser's WebSocket, which cannot set headers, puts in the URL.
 */
export function socketKey(req: HttpRequest): string {
  const key = presentedKey({ authorization: req.getHeader(NAME.authorization), apiKey: req.getHeader(NAME.apiKey) });
  return key || (new URLSearchParams(req.getQuery() ?? '').get('access_token') ?? '');
}

/**
 * The API key of a request: `Authorization: Bearer <key>` or `X-Api-Key: <key>`. An Authorization
 * header of another scheme (Basic credentials a reverse proxy asked for, say) is not perch's: the
 * key is then taken from X-Api-Key. A Bearer header wins over X-Api-Key, malformed or not.
 */
export function presentedKey(h: Pick<RequestHeaders, 'authorization' | 'apiKey'>): string {
  if (BEARER_SCHEME.test(h.authorization)) {
    // The key is what is left once the blanks around the header, the scheme and the blanks after
    // it are cut off (test, unlike exec, makes no array of matches).
    return BEARER_KEY.test(h.authorization) ? h.authorization.trim().slice(BEARER.length).trim() : '';
  }
  return h.apiKey.trim();
}

export function queryParams(ctx: Ctx): URLSearchParams {
  return new URLSearchParams(ctx.query);
}

/**
 * The query as an object of each parameter's first value, as `URLSearchParams.get` reads it
 * everywhere else (`Object.fromEntries` would keep the last: docs/api.md, "Request bodies").
 */
export function queryObject(ctx: Ctx): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of queryParams(ctx)) if (!Object.hasOwn(out, name)) out[name] = value;
  return out;
}

/** Parses `input` with a strict zod schema, turning failures into a 400 with details. */
export function parseWith<T>(schema: ZodType<T>, input: unknown, root = ''): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw invalidRequest(zodDetails(r.error, root));
}

export function zodDetails(error: ZodError, root = ''): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of error.issues) {
    const base = [root, ...issue.path.map(String)].filter(Boolean);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ path: [...base, key].join('.'), message: `unknown field "${key}"` });
    } else {
      details.push({ path: base.join('.'), message: issue.message });
    }
  }
  return details;
}

/** A JSON body's value; 400 for bytes that are not UTF-8 or text that is not JSON. */
function decodeJson(body: ArrayBuffer | Buffer): unknown {
  // JSON is UTF-8; decoding other bytes would silently put U+FFFD into what is stored.
  if (!isUtf8(body)) throw invalidRequest([{ path: '', message: 'the body is not valid UTF-8' }], 'The body is not valid UTF-8 JSON.');
  try {
    return JSON.parse(UTF8.decode(body));
  } catch {
    throw invalidRequest([{ path: '', message: 'the body is not valid JSON' }], 'The body is not valid JSON.');
  }
}

/**
 * The body sent to a route that takes none: accepted as JSON that says nothing (an empty object),
 * refused as any JSON body would be otherwise (415, 400; a field is unknown to such a route).
 */
function checkEmptyJson(contentType: string, body: ArrayBuffer | Buffer): void {
  if (!isJsonContentType(contentType)) throw new HttpError('unsupported_media_type', 'Send the body as application/json.');
  const value = decodeJson(body);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest([{ path: '', message: 'this endpoint takes no body: send none, or an empty object' }]);
  }
  const keys = Object.keys(value);
  if (keys.length > 0) throw invalidRequest(keys.map((key) => ({ path: key, message: `unknown field "${key}"` })));
}

function isJsonContentType(ct: string): boolean {
  const semi = ct.indexOf(';');
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

interface InFlight {
  aborted: boolean;
  done: boolean;
  started: number;
  route: string;
  method: Method;
  head: boolean;
}

/** Counts requests in progress, so shutdown can wait for them. */
export const inFlight = { count: 0 };

export function writeReply(res: HttpResponse, reply: Reply, head: boolean, closeConnection = false): void {
  writeHead(res, reply);
  let body: string | Buffer | undefined = reply.body;
  if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    res.writeHeader(CONTENT_TYPE, APPLICATION_JSON);
  } else if (body !== undefined && reply.contentType) {
    res.writeHeader(CONTENT_TYPE, reply.contentType === 'application/json' ? APPLICATION_JSON : reply.contentType);
  }
  if (reply.status === 204 || reply.status === 304) {
    // No body and no Content-Length: a 204 must not have one, and a 304's would describe the
    // cached representation, which this reply does not carry. uWS closes a connection only with
    // a length it writes itself: here the header tells the client to send nothing more on it.
    if (closeConnection) res.writeHeader('Connection', 'close');
    res.endWithoutBody();
  } else if (head) {
    if (closeConnection) res.writeHeader('Connection', 'close');
    endHead(res, body ?? '');
  } else {
    res.end(body ?? '', closeConnection);
  }
}

/**
 * Ends the answer to a HEAD request: the headers a GET would get, Content-Length included, and
 * no body. (endWithoutBody with a length argument aborts the process in this uWS build, and
 * without one it writes no Content-Length, so the header is written here.)
 */
export function endHead(res: HttpResponse, body: string | Buffer): void {
  res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  res.endWithoutBody();
}

/** A request whose framing two parsers could read differently (http/framing.ts). */
function badFraming(problem: string): HttpError {
  return invalidRequest([{ path: '', message: problem }], `${problem.charAt(0).toUpperCase()}${problem.slice(1)}.`);
}

function uriTooLong(): HttpError {
  return new HttpError('uri_too_long', `The request URL is limited to ${MAX_REQUEST_TARGET_BYTES} bytes.`);
}

export function errorReply(err: unknown, requestId: string, context: Record<string, unknown>): Reply {
  if (err instanceof HttpError) return { status: err.status, json: err.body(), headers: err.headers };
  log.error('request failed', { request_id: requestId, ...context, ...errorFields(err) });
  const e = new HttpError('internal', `Something went wrong on our side (request ${requestId}).`, { request_id: requestId });
  return { status: e.status, json: e.body(), headers: { 'X-Request-Id': requestId } };
}

export class Router {
  private readonly byPath = new Map<string, Route[]>();
  private readonly raw = new Map<string, RawRoute[]>();
  private readonly webSockets = new Set<string>();
  private readonly reserved = new Set<string>();

  /**
   * Set as the thread stops: every answer from then on closes its connection (one without a body
   * says `Connection: close`, which tells the client to send nothing more on it), so that a client
   * that keeps its connection busy (keep-alive, a request after each answer) cannot hold the
   * thread open until the shutdown deadline; it reconnects, and finds the port closed.
   */
  private closing = false;

  constructor(private readonly hooks: RouterHooks) {}

  /** From now on, each answer closes its connection (the thread is stopping). */
  closeConnectionsAfterAnswers(): void {
    this.closing = true;
  }

  add(...routes: Route[]): this {
    for (const r of routes) {
      const list = this.byPath.get(r.path) ?? [];
      if (list.some((x) => x.method === r.method)) throw new Error(`duplicate route ${r.method} ${r.path}`);
      list.push(r);
      this.byPath.set(r.path, list);
    }
    return this;
  }

  addRaw(...routes: RawRoute[]): this {
    for (const r of routes) {
      const list = this.raw.get(r.path) ?? [];
      list.push(r);
      this.raw.set(r.path, list);
      if (!this.byPath.has(r.path)) this.byPath.set(r.path, []);
    }
    return this;
  }

  /**
   * Paths served by a WebSocket upgrade the app registered before mount (uWS offers a request to
   * the handlers of a path in the order they were registered, and the upgrade's passes on a
   * request without the upgrade headers). A GET or HEAD without them is 404 here; other methods
   * are 405 with `Allow: GET, HEAD`, as on a path of GET routes.
   */
  addWebSocket(path: string): this {
    this.webSockets.add(path);
    return this;
  }

  /**
   * Root paths that belong to the service and name no resource of their own (`/api` without the
   * rest): every method answers 404 "No such endpoint.", as any path no route matches does. Without
   * this, a parameter route of the root (`/:code`) would take them, and its 405 would name methods
   * that do not work there. Paths with routes or a WebSocket are left to those.
   */
  reserve(paths: Iterable<string>): this {
    for (const p of paths) this.reserved.add(p);
    return this;
  }

  /** Registers every route, a 405 responder per path, and the catch-all 404. */
  mount(app: TemplatedApp): void {
    for (const [path, routes] of this.byPath) {
      const raw = this.raw.get(path) ?? [];
      const methods: Method[] = [...raw.map((r) => r.method), ...routes.map((r) => r.method)];
      if (methods.includes('GET') && !methods.includes('HEAD')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
      const allow = methods.join(', ');
      for (const r of raw) {
        const handler = this.framed(r, path);
        if (r.method === 'GET') app.get(path, handler);
        else app.head(path, handler);
      }
      const paramCount = path.split('/').filter((s) => s.startsWith(':')).length;
      for (const route of routes) {
        const handler = (res: HttpResponse, req: HttpRequest) => this.handle(route, paramCount, res, req, false);
        switch (route.method) {
          case 'GET':
            app.get(path, handler);
            if (!raw.some((r) => r.method === 'HEAD')) app.head(path, (res, req) => this.handle(route, paramCount, res, req, true));
            break;
          case 'POST': app.post(path, handler); break;
          case 'PUT': app.put(path, handler); break;
          case 'PATCH': app.patch(path, handler); break;
          case 'DELETE': app.del(path, handler); break;
        }
      }
      app.any(path, (res, req) => this.reject(res, req, methodNotAllowed(allow), path));
    }
    for (const path of this.webSockets) {
      if (this.byPath.has(path)) throw new Error(`${path} has both routes and a WebSocket`);
      // Not public: a request without a valid key is told so first (401), as on every endpoint
      // that needs one; with one, that this path only takes an upgrade. The key is read where the
      // upgrade reads it (headers, else ?access_token=).
      const plain = (res: HttpResponse, req: HttpRequest) => {
        const key = socketKey(req);
        const known = key !== '' && this.hooks.authenticate(key) !== undefined;
        const err = known
          ? notFound('This is a WebSocket endpoint: send a WebSocket upgrade request (Upgrade: websocket).')
          : unauthorized(key ? 'The API key is unknown or revoked.' : 'A valid API key is required.');
        this.reject(res, req, err, path);
      };
      app.get(path, plain);
      app.head(path, plain);
      app.any(path, (res, req) => this.reject(res, req, methodNotAllowed('GET, HEAD'), path));
    }
    for (const path of this.reserved) {
      if (this.byPath.has(path) || this.webSockets.has(path)) continue;
      app.any(path, (res, req) => this.reject(res, req, notFound('No such endpoint.'), 'unmatched'));
    }
    app.any('/*', (res, req) => this.reject(res, req, notFound('No such endpoint.'), 'unmatched'));
  }

  /**
   * A raw route's handler behind the same framing check as every other route: a GET or HEAD with
   * a Content-Length or Transfer-Encoding header is rare, so the common request pays two header
   * reads, and one with framing two parsers could read differently is refused before it is served.
   */
  private framed(r: RawRoute, path: string): RawRoute['handler'] {
    const serve = r.handler;
    return (res, req) => {
      const contentLength = req.getHeader(NAME.contentLength);
      const transferEncoding = req.getHeader(NAME.transferEncoding);
      if ((contentLength !== '' || transferEncoding !== '') && this.refusedForFraming(res, req, contentLength, transferEncoding, performance.now(), path, r.method)) return;
      serve(res, req);
    };
  }

  private reject(res: HttpResponse, req: HttpRequest, err: HttpError, route: string): void {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    const contentLength = req.getHeader(NAME.contentLength);
    const transferEncoding = req.getHeader(NAME.transferEncoding);
    const hasBody = contentLength !== '' || transferEncoding !== '';
    if (hasBody && this.refusedForFraming(res, req, contentLength, transferEncoding, started, route, method as Method)) return;
    if (requestTargetLength(req.getUrl(), req.getQuery() ?? '') > MAX_REQUEST_TARGET_BYTES) err = uriTooLong();
    writeReply(res, { status: err.status, json: err.body(), headers: err.headers }, method === 'HEAD', hasBody);
    this.hooks.observe(route, method, err.status, (performance.now() - started) / 1000);
  }

  /**
   * For a request outside the routes' glue (a raw route, a rejection): refuses it (refuse) when
   * its framing is suspect and says so; false when its framing is fine.
   */
  private refusedForFraming(res: HttpResponse, req: HttpRequest, contentLength: string, transferEncoding: string, started: number, route: string, method: Method): boolean {
    const framing = framingProblem(req, contentLength, transferEncoding);
    if (!framing) return false;
    const state: InFlight = { aborted: false, done: false, started, route, method, head: method === 'HEAD' };
    inFlight.count++;
    const e = badFraming(framing);
    this.refuse(res, state, { status: e.status, json: e.body(), headers: e.headers });
    return true;
  }

  /**
   * Answers a request whose framing is suspect and closes the connection, from the next turn:
   * answered at once, uWS would go on to parse and dispatch the bytes that follow in the same
   * read (a smuggled request is made of them). While this answer is pending, uWS closes the
   * connection when it reaches such bytes instead of dispatching them.
   */
  private refuse(res: HttpResponse, state: InFlight, reply: Reply): void {
    res.onAborted(() => {
      state.aborted = true;
      this.settle(state, 499);
    });
    setImmediate(() => {
      if (!state.aborted) res.cork(() => this.finish(res, state, reply, true));
    });
  }

  /**
   * Runs a route that changes state once uWS has parsed everything that came with the request.
   * uWS does not pipeline answers given asynchronously: when the next request arrives while one
   * is pending, it closes the connection, and the pending answer can never be sent. A write run
   * at once would be committed and never acknowledged; run from the next turn, a request whose
   * connection was closed that way is aborted by then, and not run at all.
   */
  private runAfterParse(route: Route, res: HttpResponse, ctx: Ctx, state: InFlight, attachAbort: boolean): void {
    if (attachAbort) {
      res.onAborted(() => {
        state.aborted = true;
        this.settle(state, 499);
      });
    }
    // One immediate for every request parsed in this turn, run in the order they were parsed.
    this.parsed.push(route, res, ctx, state);
    if (this.parsed.length === 4) setImmediate(this.runParsed);
  }

  /** Requests parsed in this turn that wait for the next (runAfterParse): route, res, ctx, state. */
  private parsed: unknown[] = [];

  private readonly runParsed = (): void => {
    const parsed = this.parsed;
    this.parsed = [];
    for (let i = 0; i < parsed.length; i += 4) {
      const state = parsed[i + 3] as InFlight;
      if (!state.aborted) this.run(parsed[i] as Route, parsed[i + 1] as HttpResponse, parsed[i + 2] as Ctx, state, true);
    }
  };

  private handle(route: Route, paramCount: number, res: HttpResponse, req: HttpRequest, head: boolean): void {
    const started = performance.now();
    const headers = readHeaders(req, route.method === 'GET');
    let params = NO_PARAMS;
    if (paramCount > 0) {
      params = [];
      for (let i = 0; i < paramCount; i++) params.push(decodeParam(req.getParameter(i) ?? ''));
    }
    let extra = NO_EXTRA;
    if (route.extraHeaders) {
      extra = {};
      for (const name of route.extraHeaders) extra[name] = req.getHeader(name);
    }
    const ctx: Ctx = {
      method: head ? 'HEAD' : route.method,
      url: req.getUrl(),
      query: req.getQuery() ?? '',
      params,
      headers,
      requestNo: ++requestCounter,
      json: undefined,
      raw: null,
      principal: null,
      extra,
      remoteAddress: route.remoteAddress ? textDecoder.decode(res.getRemoteAddressAsText()) : '',
    };
    const state: InFlight = { aborted: false, done: false, started, route: route.name ?? route.path, method: ctx.method, head };
    inFlight.count++;
    if (headers.contentLength !== '' || headers.transferEncoding !== '') {
      const framing = framingProblem(req, headers.contentLength, headers.transferEncoding);
      if (framing) {
        this.refuse(res, state, this.failure(route, ctx, badFraming(framing), state));
        return;
      }
    }
    try {
      if (requestTargetLength(ctx.url, ctx.query) > MAX_REQUEST_TARGET_BYTES) throw uriTooLong();
      if (route.auth) {
        const key = presentedKey(headers);
        const principal = key ? this.hooks.authenticate(key) : undefined;
        if (!principal) throw unauthorized(key ? 'The API key is unknown or revoked.' : 'A valid API key is required.');
        ctx.principal = principal;
      }
      if (route.body === 'json' || route.body === 'raw') {
        this.readBody(route, res, ctx, state);
        return;
      }
      if (route.method !== 'GET') {
        // An endpoint that takes no body holds one sent anyway to the rules of every body
        // (CONTRACT.md, section 1): JSON, 16 KiB at most, and no field it does not know, which
        // for it is every field. Most such requests have none and go straight on.
        if (hasBodyHeaders(headers) || headers.transferEncoding !== '') this.readBody(route, res, ctx, state);
        else this.runAfterParse(route, res, ctx, state, true);
        return;
      }
      this.run(route, res, ctx, state);
    } catch (err) {
      this.finish(res, state, this.failure(route, ctx, err, state), hasBodyHeaders(headers));
    }
  }

  private readBody(route: Route, res: HttpResponse, ctx: Ctx, state: InFlight): void {
    /** A route that takes no body, read because one was sent: nothing, or an empty JSON object. */
    const noBody = route.body !== 'json' && route.body !== 'raw';
    const isJson = route.body === 'json' || noBody;
    const limit = isJson ? JSON_BODY_LIMIT : route.maxBodyBytes ?? JSON_BODY_LIMIT;
    const declared = ctx.headers.contentLength === '' ? -1 : Number(ctx.headers.contentLength);
    // A chunked body of a route that takes none may turn out empty: its type is checked once read.
    if (isJson && !(noBody && declared === -1) && !isJsonContentType(ctx.headers.contentType)) {
      throw new HttpError('unsupported_media_type', 'Send the body as application/json.');
    }
    if (declared > limit) throw new HttpError('payload_too_large', `The body is limited to ${limit} bytes.`);
    res.onAborted(() => {
      state.aborted = true;
      this.settle(state, 499);
    });
    let chunks: Buffer[] | null = null;
    // A raw body of declared length is copied once, into a buffer of that length, rather than
    // chunk by chunk and then joined: an upload of 5 MiB would otherwise take twice that, and a
    // copy more, while it is read.
    let into: Buffer | null = !isJson && declared > 0 ? Buffer.allocUnsafe(declared) : null;
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.done || state.aborted) return;
      const at = size;
      size += chunk.byteLength;
      if (size > limit) {
        const e = new HttpError('payload_too_large', `The body is limited to ${limit} bytes.`);
        res.cork(() => this.finish(res, state, this.failure(route, ctx, e, state), true));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: a chunk that is not the
      // whole body, or a raw body (kept past this callback), is copied. A JSON body that came in
      // one chunk is read in place, since it is parsed before this callback returns.
      if (into !== null) {
        if (size <= into.length) into.set(new Uint8Array(chunk), at);
        else {
          // More than declared (uWS frames by the length, so never seen): kept like any chunk.
          chunks = [into.subarray(0, at), Buffer.from(new Uint8Array(chunk))];
          into = null;
        }
      } else if (!isLast || chunks !== null || !isJson) (chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      const body: ArrayBuffer | Buffer =
        into !== null ? into.subarray(0, size) : chunks === null ? chunk : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      try {
        if (noBody) {
          if (size > 0) checkEmptyJson(ctx.headers.contentType, body);
        } else if (isJson) {
          if (size === 0) throw invalidRequest([{ path: '', message: 'a JSON body is required' }], 'A JSON body is required.');
          ctx.json = decodeJson(body);
        } else {
          // A raw body is always a copy (above).
          ctx.raw = body as Buffer;
        }
      } catch (err) {
        res.cork(() => this.finish(res, state, this.failure(route, ctx, err, state)));
        return;
      }
      this.runAfterParse(route, res, ctx, state, false);
    });
  }

  private run(route: Route, res: HttpResponse, ctx: Ctx, state: InFlight, needsCork = false): void {
    let result: Reply | Promise<Reply>;
    try {
      result = route.handler(ctx);
    } catch (err) {
      const reply = this.failure(route, ctx, err, state);
      if (needsCork) res.cork(() => this.finish(res, state, reply));
      else this.finish(res, state, reply);
      return;
    }
    if (!(result instanceof Promise)) {
      // A stream outlives this callback: it must hear of an abort (a body route already listens).
      if (result.stream && !needsCork) {
        res.onAborted(() => {
          state.aborted = true;
          this.settle(state, 499);
        });
      }
      if (needsCork) res.cork(() => this.finish(res, state, result as Reply));
      else this.finish(res, state, result);
      return;
    }
    if (!needsCork) {
      // Body-less requests reach here synchronously, so the abort handler is still attachable.
      res.onAborted(() => {
        state.aborted = true;
        this.settle(state, 499);
      });
    }
    result.then(
      (reply) => {
        if (!state.aborted) res.cork(() => this.finish(res, state, reply));
      },
      (err) => {
        const reply = this.failure(route, ctx, err, state);
        if (!state.aborted) res.cork(() => this.finish(res, state, reply));
      },
    );
  }

  /** The error answer of a route, with its errorHeaders (on an authenticated route's 401 too, with no principal). */
  private failure(route: Route, ctx: Ctx, err: unknown, state: InFlight): Reply {
    const reply = errorReply(err, `${this.hooks.threadIndex}-${ctx.requestNo.toString(36)}`, { route: state.route });
    if (route.errorHeaders) {
      let extra: Record<string, string> = {};
      try {
        extra = route.errorHeaders(ctx);
      } catch {
        // Decoration only: an error answer never fails because of it.
      }
      reply.headers = { ...extra, ...reply.headers };
    }
    return reply;
  }

  private finish(res: HttpResponse, state: InFlight, reply: Reply, closeConnection = false): void {
    if (state.done || state.aborted) return;
    if (reply.stream) {
      this.startStream(res, state, reply, reply.stream);
      return;
    }
    writeReply(res, reply, state.head, closeConnection || this.closing);
    this.settle(state, reply.status);
  }

  /**
   * Sends a streamed reply: a chunk per event-loop turn while the socket takes them (so one large
   * export does not hold the thread, and its other connections, for its whole length), and after a
   * chunk that uWS had to buffer, the next only once onWritable says the buffer drained.
   */
  private startStream(res: HttpResponse, state: InFlight, reply: Reply, chunks: Iterator<string | Buffer, void, undefined>): void {
    writeHead(res, reply);
    if (reply.contentType) res.writeHeader(CONTENT_TYPE, reply.contentType === 'application/json' ? APPLICATION_JSON : reply.contentType);
    if (state.head) {
      chunks.return?.();
      res.endWithoutBody();
      this.settle(state, reply.status);
      return;
    }
    const stop = (): boolean => {
      if (!state.aborted && !state.done) return false;
      chunks.return?.();
      return true;
    };
    const fail = (err: unknown): void => {
      log.error('streamed reply failed', { route: state.route, ...errorFields(err) });
      chunks.return?.();
      // The status went out with the first chunk: closing without the last chunk tells the client
      // the body is incomplete.
      if (!state.aborted) res.close();
      this.settle(state, 500);
    };
    const next = (): void => {
      if (stop()) return;
      let step: IteratorResult<string | Buffer, void>;
      try {
        step = chunks.next();
      } catch (err) {
        res.cork(() => fail(err));
        return;
      }
      if (step.done) {
        res.cork(() => res.end());
        this.settle(state, reply.status);
        return;
      }
      const chunk = step.value;
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      if (ok) setImmediate(next);
      else {
        res.onWritable(() => {
          setImmediate(next);
          return true;
        });
      }
    };
    next();
  }

  private settle(state: InFlight, status: number): void {
    if (state.done) return;
    state.done = true;
    inFlight.count--;
    this.hooks.observe(state.route, state.method, status, (performance.now() - state.started) / 1000);
  }
}

function hasBodyHeaders(h: RequestHeaders): boolean {
  return h.contentLength !== '' && h.contentLength !== '0';
}

/**
 * A path parameter as the route reads it: percent-decoded, like every URL component a client may
 * have encoded. An encoding that does not decode (`%zz`, a lone `%`, bytes that are not UTF-8) is
 * kept as sent; its `%` then fails every check of what the parameter may be, so it names nothing.
 */
export function decodeParam(p: string): string {
  if (p.indexOf('%') === -1) return p;
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}
