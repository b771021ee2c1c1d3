// HTTP routes of the short-link management API, and POST /{code} (the password of a protected
// link). The redirect itself is a raw route: redirect.ts.
import { isUtf8 } from 'node:buffer';
import { wantsJson } from '../core/accept';
import { referrerHost } from '../core/clicks';
import { isCodeShaped } from '../core/short-code';
import { isBotUserAgent } from '../core/user-agent';
import type { CursorCodec } from '../core/cursor';
import { clientIp } from '../http/client-ip';
import { HttpError, invalidField, invalidRequest } from '../http/errors';
import { pageBody, pageRequest } from '../http/paging';
import { JSON_BODY_LIMIT, parseWith, queryObject, queryParams, type Ctx, type Reply, type Route } from '../http/router';
import type { RateLimits } from '../ratelimit/policies';
import {
  GONE_HTML, GONE_JSON, HTML_TYPE, JSON_TYPE, NOT_FOUND_HTML, NOT_FOUND_JSON, NO_STORE, PAGE_HEADERS, PASSWORD_WRONG_HTML, PASSWORD_WRONG_JSON,
  TOO_MANY_GUESSES_HTML,
} from './pages';
import { bulkBody, exportQuery, passwordBody, patchBody, qrQuery, shortenBody } from './schema';
import type { BulkEntry, LinkService } from './service';

export interface LinkRouteDeps {
  limits: RateLimits;
  cursors: CursorCodec;
  /** Client addresses whose X-Forwarded-For is believed (server.trusted_proxies). */
  trustedProxies: ReadonlySet<string>;
}

export function linkRoutes(links: LinkService, deps: LinkRouteDeps): Route[] {
  const { limits, cursors } = deps;
  // Error answers of creation show the creation limits as they stand (and consume nothing),
  // including 415, 413 and unparsable bodies, which are answered before the handler runs.
  // Without a key (a 401): the limits a key starts with.
  const creationLimits = (ctx: Ctx) => limits.peekShorten(ctx.principal?.keyId ?? null);
  // A password link's wrong-password limit as it stands, on the answers given before its handler
  // runs (a body over the limit, a broken one); other codes have no limit to show.
  const passwordLimits = (ctx: Ctx): Record<string, string> => {
    const code = ctx.params[0];
    if (!isCodeShaped(code) || links.access(code).state !== 'protected') return {};
    return links.passwordLimitHeaders(code, clientIp(ctx.remoteAddress, ctx.extra['x-forwarded-for'], deps.trustedProxies));
  };
  return [
    {
      method: 'POST',
      path: '/api/shorten',
      auth: true,
      body: 'json',
      async handler(ctx) {
        const principal = ctx.principal!;
        links.refuseIfFlagged(principal);
        const { link, limitHeaders } = await links.shorten(principal, parseWith(shortenBody, ctx.json));
        return { status: 201, json: link, headers: { ...limitHeaders, Location: '/api/links/' + link.short_code } };
      },
      errorHeaders: creationLimits,
    },
    {
      method: 'POST',
      path: '/api/links/bulk',
      auth: true,
      body: 'json',
      async handler(ctx) {
        const principal = ctx.principal!;
        // A throttled account's entries are each answered 429, as each alone would be (bulk).
        const body = parseWith(bulkBody, ctx.json);
        // Each entry's shape is checked on its own: a malformed entry is that entry's 400.
        const entries: BulkEntry[] = body.links.map((entry) => {
          try {
            return parseWith(shortenBody, entry);
          } catch (err) {
            return err as HttpError;
          }
        });
        const { items, limitHeaders } = await links.bulk(principal, entries);
        return { status: 200, json: { items }, headers: limitHeaders };
      },
      errorHeaders: creationLimits,
    },
    {
      method: 'GET',
      path: '/api/links',
      auth: true,
      handler(ctx) {
        // The list's cursors are this user's: another user's cursor does not decode here.
        const kind = `links:${ctx.principal!.userId}`;
        const page = pageRequest(queryParams(ctx), kind, cursors);
        return { status: 200, json: pageBody(kind, links.list(ctx.principal!, page), cursors) };
      },
    },
    {
      method: 'GET',
      path: '/api/links/export',
      auth: true,
      handler(ctx) {
        const q = parseWith(exportQuery, queryObject(ctx));
        const owner = links.exportOwner(ctx.principal!, q.user);
        const filename = `perch-links-${owner.handle}.${q.format}`;
        return {
          status: 200,
          contentType: q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json',
          headers: { 'Content-Disposition': `attachment; filename="${filename}"` },
          stream: links.exportChunks(owner.id, q.format),
        };
      },
    },
    { method: 'GET', path: '/api/links/:code', auth: true, handler: (ctx) => ({ status: 200, json: links.details(ctx.principal!, ctx.params[0]) }) },
    {
      method: 'GET',
      path: '/api/links/:code/qr',
      auth: true,
      async handler(ctx) {
        // Someone else's link is 404 whatever the query says.
        links.checkManageable(ctx.principal!, ctx.params[0]);
        const q = parseWith(qrQuery, queryObject(ctx));
        const image = await links.qr(ctx.principal!, ctx.params[0], q.format, q.size);
        return { status: 200, body: image.body, contentType: image.contentType };
      },
    },
    {
      method: 'PATCH',
      path: '/api/links/:code',
      auth: true,
      body: 'json',
      async handler(ctx) {
        const principal = ctx.principal!;
        const code = ctx.params[0];
        // Someone else's link is 404 whatever the body says.
        links.checkManageable(principal, code);
        return { status: 200, json: await links.patch(principal, code, parseWith(patchBody, ctx.json)) };
      },
    },
    {
      method: 'DELETE',
      path: '/api/links/:code',
      auth: true,
      async handler(ctx) {
        await links.remove(ctx.principal!, ctx.params[0]);
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/:code',
      body: 'raw',
      maxBodyBytes: JSON_BODY_LIMIT,
      extraHeaders: ['accept', 'user-agent', 'referer', 'x-forwarded-for'],
      remoteAddress: true,
      errorHeaders: passwordLimits,
      handler: (ctx) => unlockLink(links, deps, ctx),
    },
  ];
}

function isJson(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

function isForm(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The password of POST /{code}: form-encoded `password=…` or JSON `{"password": "…"}`. */
export function passwordOf(contentType: string, raw: Buffer | null): string {
  if (!isJson(contentType) && !isForm(contentType)) {
    throw new HttpError('unsupported_media_type', 'Send the password as application/x-www-form-urlencoded or application/json.');
  }
  const bytes = raw ?? Buffer.alloc(0);
  if (!isUtf8(bytes)) throw invalidRequest([{ path: '', message: 'the body is not valid UTF-8' }], 'The body is not valid UTF-8.');
  const text = bytes.toString('utf8');
  if (isForm(contentType)) {
    const password = new URLSearchParams(text).get('password');
    if (password === null) throw invalidField('password', 'is required');
    return password;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidRequest([{ path: '', message: 'the body is not valid JSON' }], 'The body is not valid JSON.');
  }
  return parseWith(passwordBody, json).password;
}

/** An answer of POST /{code}: HTML for a browser's form, JSON for a client that asks for it. */
function answer(status: number, asJson: boolean, json: string, html: string, headers: Record<string, string> = {}): Reply {
  return { status, body: asJson ? json : html, contentType: asJson ? JSON_TYPE : HTML_TYPE, headers: { 'Cache-Control': NO_STORE, ...(asJson ? {} : PAGE_HEADERS), ...headers } };
}

/**
 * POST /{code}: the password of a protected link. Unknown codes answer 404 and expired links 410
 * as GET does; a link without a password simply redirects. The right password answers 302 to
 * the target and counts a click; a wrong one 401 (the form again, saying so), and past the
 * allowance of wrong guesses per client address and code, 429.
 */
async function unlockLink(links: LinkService, deps: LinkRouteDeps, ctx: Ctx): Promise<Reply> {
  const code = ctx.params[0];
  const asJson = wantsJson(ctx.extra.accept) || isJson(ctx.headers.contentType);
  try {
    const access = isCodeShaped(code) ? links.access(code) : ({ state: 'unknown' } as const);
    if (access.state === 'unknown') return answer(404, asJson, NOT_FOUND_JSON, NOT_FOUND_HTML);
    if (access.state === 'expired') return answer(410, asJson, GONE_JSON, GONE_HTML);
    let url = access.url;
    let headers: Record<string, string> = {};
    if (access.state === 'protected') {
      const client = clientIp(ctx.remoteAddress, ctx.extra['x-forwarded-for'], deps.trustedProxies);
      let password: string;
      try {
        password = passwordOf(ctx.headers.contentType, ctx.raw);
      } catch (err) {
        // No password to check (a 400 or 415): the limit as it stands, nothing consumed.
        if (err instanceof HttpError) Object.assign(err.headers, links.passwordLimitHeaders(code, client));
        throw err;
      }
      const outcome = await links.unlock(access, code, client, password);
      if (!outcome.ok) return answer(401, asJson, PASSWORD_WRONG_JSON, PASSWORD_WRONG_HTML, outcome.limitHeaders);
      url = outcome.url;
      headers = outcome.limitHeaders;
    }
    const userAgent = ctx.extra['user-agent'];
    links.clicks.push(code, Date.now(), referrerHost(ctx.extra.referer), isBotUserAgent(userAgent), userAgent);
    return { status: 302, headers: { Location: url, 'Cache-Control': NO_STORE, ...headers } };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.status === 429 && !asJson) return answer(429, false, '', TOO_MANY_GUESSES_HTML, err.headers);
    return { status: err.status, json: err.body(), headers: { 'Cache-Control': NO_STORE, ...err.headers } };
  }
}
