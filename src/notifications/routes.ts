// HTTP routes of notifications and Web Push: the list, read state, preferences, the VAPID public
// key and push subscriptions. The WebSocket endpoint is in websocket.ts.
import type { CursorCodec } from '../core/cursor';
import { MAX_LIMIT, parseLimit } from '../core/page-limit';
import { invalidRequest, type ErrorDetail } from '../http/errors';
import { pageBody, pageRequest } from '../http/paging';
import { NO_CONTENT, callerAction, parseWith, queryParams, type Route } from '../http/router';
import { preferencesSchema, subscriptionSchema } from './schema';
import type { NotificationService } from './service';

/** `?limit` and `?cursor` of a user's notification list; a cursor holds two numbers (store.ts, page). */
function listRequest(query: URLSearchParams, kind: string, cursors: CursorCodec): { limit: number; cursor: [number, number] | null } {
  const details: ErrorDetail[] = [];
  const limit = parseLimit(query.get('limit'));
  if (Number.isNaN(limit)) details.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  let cursor: [number, number] | null = null;
  const raw = query.get('cursor');
  if (raw !== null) {
    const position = cursors.decode(kind, raw, 2);
    const h = position ? Number(position[0]) : NaN;
    const p = position ? Number(position[1]) : NaN;
    if (Number.isSafeInteger(h) && Number.isSafeInteger(p) && p <= h) cursor = [h, p];
    else details.push({ path: 'cursor', message: 'not a cursor issued for this list' });
  }
  if (details.length > 0) throw invalidRequest(details);
  return { limit, cursor };
}

export function notificationRoutes(service: NotificationService, cursors: CursorCodec): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/notifications',
      auth: true,
      handler(ctx) {
        const userId = ctx.principal!.userId;
        const kind = `notifications:${userId}`;
        const req = listRequest(queryParams(ctx), kind, cursors);
        const page = service.page(userId, req.cursor, req.limit);
        return {
          status: 200,
          json: { items: page.items, next_cursor: page.next === null ? null : cursors.encode(kind, page.next.map(String)) },
        };
      },
    },
    {
      method: 'POST',
      path: '/api/notifications/read-all',
      auth: true,
      async handler(ctx) {
        await service.markAllRead(ctx.principal!.userId);
        return NO_CONTENT;
      },
    },
    callerAction('POST', '/api/notifications/:id/read', (userId, id) => service.markRead(userId, id)),
    {
      method: 'GET',
      path: '/api/notifications/preferences',
      auth: true,
      handler: (ctx) => ({ status: 200, json: service.preferences(ctx.principal!.userId) }),
    },
    {
      method: 'PUT',
      path: '/api/notifications/preferences',
      auth: true,
      body: 'json',
      async handler(ctx) {
        const input = parseWith(preferencesSchema, ctx.json);
        return { status: 200, json: await service.setPreferences(ctx.principal!.userId, input) };
      },
    },
    {
      method: 'GET',
      path: '/api/push/vapid-public-key',
      handler: () => ({ status: 200, json: { public_key: service.vapidPublicKey() } }),
    },
    {
      method: 'POST',
      path: '/api/push/subscriptions',
      auth: true,
      body: 'json',
      async handler(ctx) {
        const input = parseWith(subscriptionSchema, ctx.json);
        const { subscription, created } = await service.subscribe(ctx.principal!.userId, ctx.principal!.keyId, input);
        return created
          ? { status: 201, json: subscription, headers: { Location: `/api/push/subscriptions/${subscription.id}` } }
          : { status: 200, json: subscription };
      },
    },
    {
      method: 'GET',
      path: '/api/push/subscriptions',
      auth: true,
      handler(ctx) {
        const userId = ctx.principal!.userId;
        const kind = `push_subscriptions:${userId}`;
        const page = pageRequest(queryParams(ctx), kind, cursors);
        return { status: 200, json: pageBody(kind, service.subscriptions(userId, page.before, page.limit), cursors) };
      },
    },
    callerAction('DELETE', '/api/push/subscriptions/:id', (userId, id) => service.unsubscribe(userId, id)),
  ];
}
