// The server's own routes, beside the capabilities' (capability.ts, http): liveness and metrics.
import type { Route } from '../http/router';

export interface SystemHooks {
  /** Every thread's metrics and the supervisor's, summed (the supervisor answers). */
  fetchAggregatedMetrics(): Promise<string>;
}

const HEALTHY = JSON.stringify({ status: 'ok' });

export function systemRoutes(system: SystemHooks): Route[] {
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
  ];
}
