// Which of the web client's optional screens this server can serve, written into the page it
// serves (docs/web.md, "Capabilities"). The client reads the list from the page at start, so it
// knows before its first render, without a request of its own.
import type { Route } from '../http/router';

/** A feature's name in the page, and the route whose presence means the server has it. */
export const WEB_FEATURES: ReadonlyArray<{ name: string; method: Route['method']; path: string }> = [
  // GET /api/notifications, and with it GET /ws.
  { name: 'notifications', method: 'GET', path: '/api/notifications' },
  // GET /api/search and GET /api/suggest.
  { name: 'search', method: 'GET', path: '/api/suggest' },
  { name: 'replies', method: 'GET', path: '/api/posts/:id/replies' },
  // Aliases, passwords, QR codes, browser and OS counts.
  { name: 'link-extras', method: 'GET', path: '/api/links/:code/qr' },
];

/** The element of web/index.html that the server fills in; the build leaves it empty. */
export const FEATURES_ELEMENT = '<meta name="perch-features" content="">';

/** The names of the features whose routes are among `routes`, space-separated. */
export function featureList(routes: ReadonlyArray<{ method: string; path: string }>): string {
  const served = new Set(routes.map((r) => `${r.method} ${r.path}`));
  return WEB_FEATURES.filter((f) => served.has(`${f.method} ${f.path}`))
    .map((f) => f.name)
    .join(' ');
}

/** The page with its feature list filled in; a page without the element is returned as it is. */
export function pageWithFeatures(html: string, list: string): string {
  return html.replace(FEATURES_ELEMENT, `<meta name="perch-features" content="${list}">`);
}
