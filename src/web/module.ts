// The web client: perch's own browser app for both services, built into dist/web at install time
// and served from memory (docs/web.md).
import type { Capability } from '../capability';
import { webRoutes } from './routes';

export const web: Capability = {
  name: 'web',
  http: (ctx) => webRoutes(ctx.config),
};
