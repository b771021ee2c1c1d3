// Request framing checks over a request's header list (uWS hands names over in lower case).
import t from 'tap';
import type { HttpRequest } from 'uWebSockets.js';
import { framingProblem, requestTargetLength } from '../../src/http/framing';

/** The part of uWS's HttpRequest framingProblem uses: forEach over the headers, first value by name. */
function request(headers: Array<[string, string]>): { req: HttpRequest; cl: string; te: string } {
  const first = (name: string) => headers.find(([k]) => k === name)?.[1] ?? '';
  const req = { forEach: (cb: (k: string, v: string) => void) => headers.forEach(([k, v]) => cb(k, v)) } as unknown as HttpRequest;
  return { req, cl: first('content-length'), te: first('transfer-encoding') };
}

function problem(headers: Array<[string, string]>): string | null {
  const { req, cl, te } = request(headers);
  return framingProblem(req, cl, te);
}

t.test('well-framed requests pass', async (t) => {
  t.equal(problem([['host', 'x'], ['content-length', '12']]), null);
  t.equal(problem([['content-length', '0']]), null);
  t.equal(problem([['transfer-encoding', 'chunked']]), null);
  t.equal(problem([['transfer-encoding', ' Chunked ']]), null, 'case and surrounding space do not matter');
});

t.test('what two parsers could frame differently is named', async (t) => {
  t.equal(problem([['content-length', '12'], ['content-length', '5']]), 'the request has more than one Content-Length header');
  t.equal(problem([['content-length', '5'], ['content-length', '5']]), 'the request has more than one Content-Length header', 'even equal');
  t.equal(problem([['transfer-encoding', 'chunked'], ['transfer-encoding', 'chunked']]), 'the request has more than one Transfer-Encoding header');
  t.equal(problem([['content-length', '5'], ['transfer-encoding', 'chunked']]), 'the request has both Content-Length and Transfer-Encoding');
  for (const te of ['gzip, chunked', 'chunked, gzip', 'gzip', 'identity', 'chunked;q=1', '']) {
    t.equal(problem([['transfer-encoding', te]]), 'Transfer-Encoding must be exactly "chunked"', JSON.stringify(te));
  }
  for (const cl of ['5x', '-1', '5, 5', '0x10', ' ']) t.equal(problem([['content-length', cl]]), 'Content-Length must be a number', JSON.stringify(cl));
});

t.test('the state of one check does not leak into the next', async (t) => {
  t.equal(problem([['content-length', '1'], ['content-length', '2']]), 'the request has more than one Content-Length header');
  t.equal(problem([['content-length', '1']]), null);
});

t.test('requestTargetLength counts the "?" only with a query', async (t) => {
  t.equal(requestTargetLength('/healthz', ''), 8);
  t.equal(requestTargetLength('/healthz', 'a=1'), 12);
});
