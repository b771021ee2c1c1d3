// GET /{code} and HEAD /{code}: the hot path of the appliance, served by raw uWS handlers.
// Per request: the loose per-IP limit (memory shared by the HTTP threads), one cache lookup (thread memory, else one
// LMDB read), the expiry check, an un-awaited click enqueue, and a 302 whose constant parts are
// precomputed. No closures, regular expressions or object spreads are created per request; the
// 404/410/429 answers are precomputed strings too. Every response carries the limiter headers.
// A password link answers its form (or the JSON 401) instead of the 302: one field of the cached
// entry tells, so links without a password pay one comparison. The password itself is sent to
// POST /{code} (routes.ts).
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { wantsJson } from '../core/accept';
import { referrerHost } from '../core/clicks';
import { clientNetwork } from '../core/client-network';
import { isCodeShaped } from '../core/short-code';
import { BotMemo } from '../core/user-agent';
import type { BucketDecision } from '../core/token-bucket';
import { clientIp } from '../http/client-ip';
import { decodeParam, endHead, type RawRoute } from '../http/router';
import type { IpBuckets } from '../ratelimit/ip-buckets';
import type { RedirectCache } from './cache';
import type { ClickQueue } from './clicks';
import {
  GONE_HTML, GONE_JSON, HTML_TYPE, JSON_TYPE, NOT_FOUND_HTML, NOT_FOUND_JSON, NO_STORE, PAGE_HEADERS, PASSWORD_FORM_HTML, PASSWORD_REQUIRED_JSON,
} from './pages';

export const REDIRECT_ROUTE = '/:code';

export interface RedirectDeps {
  cache: RedirectCache;
  clicks: ClickQueue;
  limiter: IpBuckets;
  trustedProxies: ReadonlySet<string>;
  observe(route: string, method: string, status: number, seconds: number): void;
  /** Counts a 429 in perch_rate_limit_rejections_total under the limiter's name. */
  rejected(limit: string): void;
}

// Module state, set once per thread by redirectRoutes (one thread, one set of deps).
let cache: RedirectCache;
let clicks: ClickQueue;
let limiter: IpBuckets;
let trusted: ReadonlySet<string>;
let trustedCount = 0;
let observe: RedirectDeps['observe'];
let rejected: RedirectDeps['rejected'];
let limitHeader = '';
/** X-RateLimit-Remaining values as strings, precomputed up to a bound. */
let remainingText: string[] = [];
const bots = new BotMemo();
const decoder = new TextDecoder();

function remaining(n: number): string {
  return n < remainingText.length ? remainingText[n] : String(n);
}

function writeLimitHeaders(res: HttpResponse, d: BucketDecision): void {
  res.writeHeader('X-RateLimit-Limit', limitHeader);
  res.writeHeader('X-RateLimit-Remaining', remaining(d.remaining));
  res.writeHeader('X-RateLimit-Reset', String(d.resetUnix));
}

function answerError(res: HttpResponse, asJson: boolean, head: boolean, status: string, json: string, html: string, d: BucketDecision): void {
  res.writeStatus(status);
  res.writeHeader('Cache-Control', NO_STORE);
  writeLimitHeaders(res, d);
  res.writeHeader('Content-Type', asJson ? JSON_TYPE : HTML_TYPE);
  if (!asJson) for (const name in PAGE_HEADERS) res.writeHeader(name, PAGE_HEADERS[name]);
  if (head) endHead(res, asJson ? json : html);
  else res.end(asJson ? json : html);
}

function answerLimited(res: HttpResponse, head: boolean, d: BucketDecision): void {
  const retry = String(d.retryAfterSeconds);
  res.writeStatus('429 Too Many Requests');
  res.writeHeader('Cache-Control', NO_STORE);
  writeLimitHeaders(res, d);
  res.writeHeader('Retry-After', retry);
  res.writeHeader('Content-Type', JSON_TYPE);
  const body = '{"error":"rate_limited","message":"Too many requests from your address; slow down.","retry_after_seconds":' + retry + ',"limit":"redirect"}';
  if (head) endHead(res, body);
  else res.end(body);
}

function serve(res: HttpResponse, req: HttpRequest, head: boolean): void {
  const started = performance.now();
  const nowMs = Date.now();
  const method = head ? 'HEAD' : 'GET';
  let ip = decoder.decode(res.getRemoteAddressAsText());
  if (trustedCount !== 0) ip = clientIp(ip, req.getHeader('x-forwarded-for'), trusted);
  // An IPv6 client by its /64, which it can move within at will (core/client-network.ts).
  const d = limiter.take(clientNetwork(ip), nowMs);
  if (!d.allowed) {
    answerLimited(res, head, d);
    rejected(limiter.name);
    observe(REDIRECT_ROUTE, method, 429, (performance.now() - started) / 1000);
    return;
  }
  // Decoded as every other path parameter is (http/router.ts): `/%61bc` is the link `abc`, as
  // `/api/links/%61bc` is. A code has no `%`, so the common path only pays the search for one.
  const code = decodeParam(req.getParameter(0) ?? '');
  const entry = isCodeShaped(code) ? cache.lookup(code, nowMs) : undefined;
  if (entry === undefined) {
    answerError(res, wantsJson(req.getHeader('accept')), head, '404 Not Found', NOT_FOUND_JSON, NOT_FOUND_HTML, d);
    observe(REDIRECT_ROUTE, method, 404, (performance.now() - started) / 1000);
    return;
  }
  if (entry[1] !== 0 && nowMs >= entry[1]) {
    answerError(res, wantsJson(req.getHeader('accept')), head, '410 Gone', GONE_JSON, GONE_HTML, d);
    observe(REDIRECT_ROUTE, method, 410, (performance.now() - started) / 1000);
    return;
  }
  if (entry[3] === 1) {
    // A password link: the form (200), or the JSON 401 for a client asking for JSON. Not a click.
    const asJson = wantsJson(req.getHeader('accept'));
    answerError(res, asJson, head, asJson ? '401 Unauthorized' : '200 OK', PASSWORD_REQUIRED_JSON, PASSWORD_FORM_HTML, d);
    observe(REDIRECT_ROUTE, method, asJson ? 401 : 200, (performance.now() - started) / 1000);
    return;
  }
  const userAgent = req.getHeader('user-agent');
  clicks.push(code, nowMs, referrerHost(req.getHeader('referer')), head || bots.isBot(userAgent), userAgent);
  res.writeStatus('302 Found');
  res.writeHeader('Location', entry[0]);
  res.writeHeader('Cache-Control', NO_STORE);
  writeLimitHeaders(res, d);
  if (head) endHead(res, '');
  else res.end();
  observe(REDIRECT_ROUTE, method, 302, (performance.now() - started) / 1000);
}

function onGet(res: HttpResponse, req: HttpRequest): void {
  serve(res, req, false);
}

function onHead(res: HttpResponse, req: HttpRequest): void {
  serve(res, req, true);
}

export function redirectRoutes(deps: RedirectDeps): RawRoute[] {
  cache = deps.cache;
  clicks = deps.clicks;
  limiter = deps.limiter;
  trusted = deps.trustedProxies;
  trustedCount = trusted.size;
  observe = deps.observe;
  rejected = deps.rejected;
  limitHeader = String(limiter.spec.capacity);
  const n = Math.min(limiter.spec.capacity, 65_536) + 1;
  remainingText = new Array<string>(n);
  for (let i = 0; i < n; i++) remainingText[i] = String(i);
  return [
    { method: 'GET', path: REDIRECT_ROUTE, handler: onGet },
    { method: 'HEAD', path: REDIRECT_ROUTE, handler: onHead },
  ];
}
