import t from 'tap';
import { CORS_ALLOW_HEADERS, CorsPolicy, isPreflight } from '../../src/http/cors';
import { statusOf } from '../../src/http/app-wrap';

t.test('listed origins, or any with "*"; nothing by default', async (t) => {
  const none = new CorsPolicy([]);
  t.equal(none.enabled, false);
  t.equal(none.allows('https://app.example'), false);
  const some = new CorsPolicy(['https://app.example', 'http://localhost:5173/']);
  t.equal(some.enabled, true);
  t.equal(some.allows('https://app.example'), true);
  t.equal(some.allows('http://localhost:5173'), true, 'configured with a trailing slash, compared as an origin');
  t.equal(some.allows('https://app.example:8443'), false, 'another port is another origin');
  t.equal(some.allows('http://app.example'), false, 'another scheme too');
  t.equal(some.allows('https://evil.example'), false);
  t.equal(some.allows(''), false, 'no Origin header');
  const any = new CorsPolicy(['*']);
  t.equal(any.allows('https://whatever.example'), true);
  t.equal(any.allows(''), false);
});

t.test('the headers: the origin echoed, Vary, and for preflights the methods and headers', async (t) => {
  const p = new CorsPolicy(['*']);
  t.same(Object.fromEntries(p.responseHeaders('https://a.example')), {
    'Access-Control-Allow-Origin': 'https://a.example',
    Vary: 'Origin',
    'Access-Control-Expose-Headers': 'Location, Retry-After, ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
  });
  t.same(Object.fromEntries(p.preflightHeaders('https://a.example')), {
    'Access-Control-Allow-Origin': 'https://a.example',
    Vary: 'Origin',
    'Access-Control-Allow-Methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
    'Access-Control-Allow-Headers': 'Authorization, X-Api-Key, Content-Type, If-None-Match',
    'Access-Control-Max-Age': '600',
  });
  for (const h of ['Authorization', 'X-Api-Key', 'Content-Type']) t.ok(CORS_ALLOW_HEADERS.split(', ').includes(h), h);
});

t.test('what an answer adds: the allowed origin\'s headers, Vary alone for any other while CORS is on, nothing while off', async (t) => {
  const some = new CorsPolicy(['https://app.example']);
  t.same(some.answerHeaders('https://app.example'), some.responseHeaders('https://app.example'));
  t.same(some.preflightAnswerHeaders('https://app.example'), some.preflightHeaders('https://app.example'));
  for (const origin of ['https://evil.example', '']) {
    t.same(some.answerHeaders(origin), [['Vary', 'Origin']], `answer, origin "${origin}"`);
    t.same(some.preflightAnswerHeaders(origin), [['Vary', 'Origin']], `preflight, origin "${origin}"`);
  }
  const none = new CorsPolicy([]);
  for (const origin of ['https://app.example', '']) {
    t.equal(none.answerHeaders(origin), null, `CORS off: answer, origin "${origin}"`);
    t.equal(none.preflightAnswerHeaders(origin), null, `CORS off: preflight, origin "${origin}"`);
  }
});

t.test('a preflight is OPTIONS on the API', async (t) => {
  t.equal(isPreflight('options', '/api/posts'), true);
  t.equal(isPreflight('options', '/api'), true);
  t.equal(isPreflight('options', '/apix'), false);
  t.equal(isPreflight('options', '/abc1234'), false);
  t.equal(isPreflight('get', '/api/posts'), false);
});

t.test('the status of a status line, however it is given', async (t) => {
  t.equal(statusOf('302 Found'), 302);
  t.equal(statusOf(Buffer.from('404 Not Found')), 404);
  t.equal(statusOf(new TextEncoder().encode('204 No Content').buffer as ArrayBuffer), 204);
  t.equal(statusOf(Buffer.from('xx 429 Too Many Requests').subarray(3)), 429, 'a view into a larger buffer');
  t.equal(statusOf('nonsense'), 200);
});
