// Who am I, and who is that: GET /api/me and GET /api/users/{id|@handle}.
import { notFound } from '../http/errors';
import type { Route } from '../http/router';
import type { MeFields } from './me-fields';
import { publicUser, type AccountStore } from './store';

export function accountRoutes(accounts: AccountStore, me: MeFields): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/me',
      auth: true,
      handler(ctx) {
        const user = accounts.userById(ctx.principal!.userId);
        if (!user) throw notFound('Your user no longer exists.');
        return { status: 200, json: me.answer(publicUser(user)) };
      },
    },
    {
      method: 'GET',
      path: '/api/users/:id',
      handler(ctx) {
        const user = accounts.userByRef(ctx.params[0]);
        if (!user) throw notFound('No such user.');
        return { status: 200, json: publicUser(user) };
      },
    },
  ];
}
