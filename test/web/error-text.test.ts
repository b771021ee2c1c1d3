// How the web client words an error answer: the server's message, then what its details add.
import t from 'tap';
import { loadWebModule } from './web-module';

// Declared rather than imported (notification-rules.test.ts says why).
interface Api {
  ApiError: new (status: number, code: string, message: string, retryAfterSeconds?: number | null, details?: Array<{ path: string; message: string }>, requestId?: string | null) => Error;
  NetworkError: new (message: string) => Error;
  describeError(err: unknown): string;
  retryable(err: unknown): boolean;
  waitText(seconds: number): string;
  formErrorText(err: unknown, fields: { labels: Record<string, string>; conflictPath?: string }): string;
}
const api = loadWebModule<Api>('src/api.ts');

t.test('a detail the message already says is not said twice', async (t) => {
  const one = new api.ApiError(400, 'invalid_request', 'expires_at: must be in the future', null, [{ path: 'expires_at', message: 'must be in the future' }]);
  t.equal(api.describeError(one), 'expires_at: must be in the future');
  const pathless = new api.ApiError(400, 'invalid_request', 'The body is not an image of type image/png.', null, [{ path: '', message: 'the body is not an image of type image/png' }]);
  t.equal(api.describeError(pathless), 'The body is not an image of type image/png.');
});

t.test('details the message does not hold are added, and a 429 says when to try again', async (t) => {
  const two = new api.ApiError(400, 'invalid_request', 'The request is not valid.', null, [
    { path: 'url', message: 'must have a host' },
    { path: 'alias', message: 'is taken' },
  ]);
  t.equal(api.describeError(two), 'The request is not valid. url: must have a host; alias: is taken.');
  const limited = new api.ApiError(429, 'rate_limited', 'Too many requests.', 3);
  t.equal(api.describeError(limited), 'Too many requests. Try again in 3 seconds.');
  t.equal(api.describeError(new api.ApiError(429, 'rate_limited', 'Daily quota reached.', 591)), 'Daily quota reached. Try again in about 10 minutes.');
});

t.test('under a form whose fields show their errors, the fields are named, not said again', async (t) => {
  const fields = { labels: { url: 'Long URL', alias: 'Alias', password: 'Password' }, conflictPath: 'alias' };
  const one = new api.ApiError(400, 'invalid_request', 'url: must have a host', null, [{ path: 'url', message: 'must have a host' }]);
  t.equal(api.formErrorText(one, fields), 'Check the field marked above: Long URL.');
  const two = new api.ApiError(400, 'invalid_request', 'The request is invalid.', null, [
    { path: 'url', message: 'must have a host' },
    { path: 'password', message: 'must be 4 to 128 characters' },
    { path: 'tags', message: 'is not a field' },
  ]);
  t.equal(api.formErrorText(two, fields), 'Check the fields marked above: Long URL, Password. tags: is not a field.', 'what no field shows is said');
  const taken = new api.ApiError(409, 'conflict', 'The alias Launch is taken.');
  t.equal(api.formErrorText(taken, fields), 'Check the field marked above: Alias.', 'a 409 on the conflict field');
  const elsewhere = new api.ApiError(409, 'conflict', 'The alias Launch is taken.');
  t.equal(api.formErrorText(elsewhere, { labels: { url: 'Target URL' } }), 'The alias Launch is taken.', 'a form without that field says the message');
  const limited = new api.ApiError(429, 'rate_limited', 'Too many requests.', 3);
  t.equal(api.formErrorText(limited, fields), 'Too many requests. Try again in 3 seconds.', 'a failure no field shows reads as before');
  t.equal(api.formErrorText(new api.NetworkError('Could not reach perch.'), fields), 'Could not reach perch.');
});

t.test('a wait reads as seconds, then minutes, then hours', async (t) => {
  t.same([1, 2, 89, 90, 591, 5369, 5399, 5400, 3600 * 2 + 100, 86_399].map((s) => api.waitText(s)), [
    '1 second', '2 seconds', '89 seconds', 'about 2 minutes', 'about 10 minutes', 'about 89 minutes', 'about 90 minutes', 'about 2 hours', 'about 2 hours', 'about 24 hours',
  ]);
});

t.test('only a failure that asking again may mend is retryable', async (t) => {
  const answered = (status: number) => api.retryable(new api.ApiError(status, 'x', 'An answer.'));
  t.equal(api.retryable(new api.NetworkError('Could not reach perch.')), true, 'the request never arrived');
  t.same([500, 502, 503, 429].map(answered), [true, true, true, true], '5xx, and a rate limit that says when');
  t.same([400, 401, 403, 404, 409, 413].map(answered), [false, false, false, false, false, false], 'the same request would get the same answer');
  t.equal(api.retryable(new Error('a bug')), false);
});

t.test("a 500's request id is said once, for a report", async (t) => {
  const bare = new api.ApiError(500, 'internal', 'Something went wrong on our side.', null, [], '3-k2x9');
  t.equal(api.describeError(bare), 'Something went wrong on our side (request id 3-k2x9).');
  const said = new api.ApiError(500, 'internal', 'Something went wrong on our side (request 3-k2x9).', null, [], '3-k2x9');
  t.equal(api.describeError(said), 'Something went wrong on our side (request 3-k2x9).', 'not again when the message holds it');
  const none = new api.ApiError(502, 'http_502', 'The server answered 502 Bad Gateway.');
  t.equal(api.describeError(none), 'The server answered 502 Bad Gateway.', 'nothing to add without one');
});
