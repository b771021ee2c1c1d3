// GET / (the web client's page) and GET /app/<file> (its scripts, styles and icon), from memory.
// `web.enabled: false` registers neither, so both answer the catch-all 404.
import type { Config } from '../config';
import { ifNoneMatchMatches } from '../core/etag';
import { notFound } from '../http/errors';
import type { Ctx, Reply, Route } from '../http/router';
import { log } from '../log';
import { chooseCoding } from './accept-encoding';
import { DEFAULT_WEB_DIR, contentSecurityPolicy, loadWebAssets, type Asset } from './assets';

function serve(asset: Asset, ctx: Ctx): Reply {
  const variant = asset.variants[chooseCoding(ctx.headers.acceptEncoding)];
  if (ifNoneMatchMatches(ctx.headers.ifNoneMatch, variant.etag)) return { status: 304, headers: variant.notModifiedHeaders };
  return { status: 200, body: variant.body, contentType: asset.contentType, headers: variant.headers };
}

export function webRoutes(config: Config, dir = DEFAULT_WEB_DIR): Route[] {
  if (!config.web.enabled) return [];
  const assets = loadWebAssets(dir, {
    'Content-Security-Policy': contentSecurityPolicy(config.server.public_origin),
  });
  if (!assets) {
    // The API serves on; only the client is missing, and the log says how to get it.
    log.warn('the web client is not built: GET / answers 404 until `npm run build` has run', { dir });
  }
  const missing = () => notFound('The web client is not built on this server.');
  return [
    {
      method: 'GET',
      path: '/',
      name: 'web page',
      handler(ctx) {
        if (!assets) throw missing();
        return serve(assets.page, ctx);
      },
    },
    {
      method: 'GET',
      path: '/app/:file',
      name: 'web file',
      handler(ctx) {
        const asset = assets?.files.get(ctx.params[0]);
        if (!asset) throw notFound('No such file.');
        return serve(asset, ctx);
      },
    },
  ];
}
