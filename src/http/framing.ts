// Checks of how a request is framed, for what uWebSockets.js accepts and a proxy in front may read
// differently (request smuggling): uWS frames a body by the first of several Content-Length
// headers, and treats any Transfer-Encoding that ends in "chunked" as chunked. A request whose
// framing two parsers could disagree on is refused (docs/deploy-proxy.md).
import type { HttpRequest } from 'uWebSockets.js';

/** Longest request target (path and query) perch answers; longer ones get 414. */
export const MAX_REQUEST_TARGET_BYTES = 8192;

// Counted by one forEach over the headers; module state, so that no closure is made per request.
let contentLengths = 0;
let transferEncodings = 0;

function countFramingHeader(name: string): void {
  // uWS hands header names over in lower case.
  if (name === 'content-length') contentLengths++;
  else if (name === 'transfer-encoding') transferEncodings++;
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * What is wrong with the framing of a request, or null. Only called for a request that has a
 * Content-Length or Transfer-Encoding header (`contentLength`, `transferEncoding`: the first of
 * each, as uWS reads them): most requests have neither and cost nothing here.
 */
export function framingProblem(req: HttpRequest, contentLength: string, transferEncoding: string): string | null {
  contentLengths = 0;
  transferEncodings = 0;
  req.forEach(countFramingHeader);
  if (contentLengths > 1) return 'the request has more than one Content-Length header';
  if (transferEncodings > 1) return 'the request has more than one Transfer-Encoding header';
  if (contentLengths === 1 && transferEncodings === 1) return 'the request has both Content-Length and Transfer-Encoding';
  if (transferEncodings === 1 && transferEncoding.trim().toLowerCase() !== 'chunked') {
    return 'Transfer-Encoding must be exactly "chunked"';
  }
  if (contentLengths === 1 && !isDigits(contentLength.trim())) return 'Content-Length must be a number';
  return null;
}

/**
 * Length of a request target: the path, and the query with its "?" when there is one. A target
 * is ASCII on the wire (anything else is percent-encoded), so characters are bytes.
 */
export function requestTargetLength(path: string, query: string): number {
  return path.length + (query.length > 0 ? query.length + 1 : 0);
}
