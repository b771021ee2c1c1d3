// HTTP routes of the short-link management API (the redirect is a raw route: redirect.ts).
import { parseWith, queryParams, type Route } from '../http/router';
import { pageBody, pageRequest } from '../http/paging';
import type { CursorCodec } from '../core/cursor';
import type { RateLimits } from '../ratelimit/policies';
import { patchBody, shortenBody } from './schema';
import type { LinkService } from './service';

export function linkRoutes(links: LinkService, limits: RateLimits, cursors: CursorCodec): Route[] {
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
      // Error answers show the creation limits as they stand (and consume nothing), including
      // 415, 413 and unparsable bodies, which are answered before the handler runs.
      errorHeaders: (ctx) => limits.peekShorten(ctx.principal!.keyId),
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
    { method: 'GET', path: '/api/links/:code', auth: true, handler: (ctx) => ({ status: 200, json: links.details(ctx.principal!, ctx.params[0]) }) },
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
  ];
}
