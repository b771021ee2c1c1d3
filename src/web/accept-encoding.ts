// Which precompressed form of a web client file to send, from the request's Accept-Encoding
// (RFC 9110, section 12.5.3). Pure; the routes precompute everything else.

import { forEachElement } from '../core/quality';

export type Coding = 'br' | 'gzip' | 'identity';

/**
 * The coding to answer with: the acceptable one with the highest quality among brotli and gzip
 * (brotli on a tie, being smaller), or the file as it is when neither is acceptable or the client
 * rates `identity` above both. A coding the header does not name takes the quality of `*`, or is
 * not acceptable; `identity` not named stays acceptable, as the least preferred choice.
 */
export function chooseCoding(acceptEncoding: string): Coding {
  if (acceptEncoding === '') return 'identity';
  let br = -1;
  let gzip = -1;
  let identity = -1;
  let any = -1;
  forEachElement(acceptEncoding, (name, q) => {
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip, q);
    else if (name === 'identity') identity = q;
    else if (name === '*') any = q;
  });
  if (br === -1) br = Math.max(any, 0);
  if (gzip === -1) gzip = Math.max(any, 0);
  const best = Math.max(br, gzip);
  if (best <= 0 || identity > best) return 'identity';
  return br >= gzip ? 'br' : 'gzip';
}
