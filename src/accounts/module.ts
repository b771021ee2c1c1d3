// Users and API keys: who is asking (authentication runs in the router, on every HTTP thread, with
// a per-thread cache: key-cache.ts) and GET /api/me, /api/users/{id}. Keys are made and revoked by
// the CLI (cli/keys.ts).
import type { Capability } from '../capability';
import { MIGRATIONS } from './migrations';
import { accountRoutes } from './routes';
import { AccountStore } from './store';

export const accounts: Capability = {
  name: 'accounts',
  migrations: MIGRATIONS,
  http: (ctx) => ({ routes: accountRoutes(ctx.accounts, ctx.me) }),
  status: ({ sqlite }) => new AccountStore(sqlite).counts(),
};
