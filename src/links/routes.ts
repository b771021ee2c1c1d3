// HTTP routes of the short-link management API (the redirect is a raw route: redirect.ts).
import { queryParams, type Route } from '../http/router';
import type { RateLimits } from '../ratelimit/policies';
import type { LinkService } from './service';

export function linkRoutes(links: LinkService, limits: RateLimits): Route[] {
  return [
    {
      method: 'POST',
      path: '/api/shorten',
      auth: true,
      body: 'json',
      handler: (ctx) => links.shorten(ctx.principal!, ctx.json),
      // 415, 413 and unparsable bodies are answered before the handler runs; they show the
      // creation limits as they stand too (and consume nothing).
      errorHeaders: (ctx) => limits.peekShorten(ctx.principal!.keyId),
    },
    { method: 'GET', path: '/api/links', auth: true, handler: (ctx) => links.list(ctx.principal!, queryParams(ctx)) },
    { method: 'GET', path: '/api/links/:code', auth: true, handler: (ctx) => links.details(ctx.principal!, ctx.params[0]) },
    { method: 'PATCH', path: '/api/links/:code', auth: true, body: 'json', handler: (ctx) => links.patch(ctx.principal!, ctx.params[0], ctx.json) },
    { method: 'DELETE', path: '/api/links/:code', auth: true, handler: (ctx) => links.remove(ctx.principal!, ctx.params[0]) },
  ];
}
