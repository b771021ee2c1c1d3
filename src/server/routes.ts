// The route table of an HTTP thread: every capability contributes its routes here.
import type { RawRoute, Route } from '../http/router';
import type { ThreadMetrics } from '../http/metrics';
import { accountRoutes } from '../accounts/routes';
import { linkRoutes } from '../links/routes';
import { redirectRoutes } from '../links/redirect';
import type { Services } from './services';
import { webRoutes } from '../web/routes';

export interface SystemHooks {
  fetchAggregatedMetrics(): Promise<string>;
  metrics: ThreadMetrics;
}

const HEALTHY = JSON.stringify({ status: 'ok' });

export function buildRoutes(services: Services, system: SystemHooks): Route[] {
  return [
    { method: 'GET', path: '/healthz', handler: () => ({ status: 200, body: HEALTHY, contentType: 'application/json' }) },
    {
      method: 'GET',
      path: '/metrics',
      async handler() {
        const text = await system.fetchAggregatedMetrics();
        return { status: 200, body: text, contentType: 'text/plain; version=0.0.4; charset=utf-8' };
      },
    },
    ...accountRoutes(services.accounts),
    ...services.social.routes(),
    ...linkRoutes(services.links, services.limits),
    ...webRoutes(services.config),
  ];
}

/** Hot paths served by raw uWS handlers (see RawRoute). */
export function buildRawRoutes(services: Services, system: SystemHooks): RawRoute[] {
  return [
    ...redirectRoutes({
      cache: services.links.cache,
      clicks: services.links.clicks,
      limiter: services.limits.redirect,
      trustedProxies: services.trustedProxies,
      observe: system.metrics.observe,
      rejected: system.metrics.rateLimitRejected,
    }),
  ];
}
