// GET / (the web client's page) and GET /app/<file> (its scripts, styles and icon), from memory.
// The page carries the list of the client's optional screens this server can serve (features.ts).
// `web.enabled: false` registers neither, so both answer the catch-all 404.
import type { Config } from '../config';
import { ifNoneMatchMatches } from '../core/etag';
import { notFound } from '../http/errors';
import type { Ctx, Reply, Route } from '../http/router';
import { log } from '../log';
import { chooseCoding } from './accept-encoding';
import { DEFAULT_WEB_DIR, contentSecurityPolicy, loadWebAssets, withBody, type Asset } from './assets';
import { featureList, pageWithFeatures } from './features';

function serve(asset: Asset, ctx: Ctx): Reply {
  const variant = asset.variants[chooseCoding(ctx.headers.acceptEncoding)];
  if (ifNoneMatchMatches(ctx.headers.ifNoneMatch, variant.etag)) return { status: 304, headers: variant.notModifiedHeaders };
  return { status: 200, body: variant.body, contentType: asset.contentType, headers: variant.headers };
}

export interface WebRoutes {
  routes: Route[];
  /** Fills the page's feature list in from every route the thread serves (features.ts). */
  routesReady(all: ReadonlyArray<{ method: string; path: string }>): void;
}

export function webRoutes(config: Config, dir = DEFAULT_WEB_DIR): WebRoutes {
  if (!config.web.enabled) return { routes: [], routesReady() {} };
  const assets = loadWebAssets(dir, {
    'Content-Security-Policy': contentSecurityPolicy(config.server.public_origin),
  });
  if (!assets) {
    // The API serves on; only the client is missing, and the log says how to get it.
    log.warn('the web client is not built: GET / answers 404 until `npm run build` has run', { dir });
  }
  let page = assets?.page;
  const missing = () => notFound('The web client is not built on this server.');
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/',
      name: 'web page',
      handler(ctx) {
        if (!page) throw missing();
        return serve(page, ctx);
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
  return {
    routes,
    routesReady(all) {
      if (!assets) return;
      const html = assets.page.variants.identity.body.toString('utf8');
      page = withBody(assets.page, Buffer.from(pageWithFeatures(html, featureList(all))));
    },
  };
}
