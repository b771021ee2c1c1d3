// The server's own routes, beside the capabilities' (capability.ts, http): liveness, readiness
// and metrics.
import { unavailable } from '../http/errors';
import type { Route } from '../http/router';
import { VERSION } from '../version';

export interface SystemHooks {
  /** Every thread's metrics and the supervisor's, summed (the supervisor answers). */
  fetchAggregatedMetrics(): Promise<string>;
  /** Whether this thread's durable store answers a query and its hot store is open. */
  ready(): boolean;
}

const HEALTHY = JSON.stringify({ status: 'ok' });
const READY = JSON.stringify({ status: 'ready', version: VERSION });

export function systemRoutes(system: SystemHooks): Route[] {
  return [
    // Liveness: the process serves. A failing store does not make a restart the cure.
    { method: 'GET', path: '/healthz', handler: () => ({ status: 200, body: HEALTHY, contentType: 'application/json' }) },
    {
      // Readiness: this thread can serve from its stores (a load balancer stops sending otherwise).
      method: 'GET',
      path: '/readyz',
      handler() {
        if (!system.ready()) throw unavailable(5, 'The stores are not ready; try again shortly.');
        return { status: 200, body: READY, contentType: 'application/json' };
      },
    },
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
