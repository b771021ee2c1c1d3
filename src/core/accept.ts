// Content negotiation from the request's Accept header (RFC 9110, section 12.5.1), for the few
// answers perch gives either as a page or as JSON. Pure.

import { forEachElement } from './quality';

/**
 * Whether a client asks for JSON rather than a page: it names `application/json` (in any case)
 * with a quality above 0, at least that of `text/html` when it names that too. Wildcard ranges (all
 * types, all application types) do not count: a browser accepts everything at some quality and
 * wants the page.
 */
export function wantsJson(accept: string): boolean {
  if (accept === '') return false;
  let json = 0;
  let html = 0;
  forEachElement(accept, (type, q) => {
    if (type === 'application/json') json = Math.max(json, q);
    else if (type === 'text/html') html = Math.max(html, q);
  });
  return json > 0 && json >= html;
}
