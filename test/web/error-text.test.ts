// How the web client words an error answer: the server's message, then what its details add.
import t from 'tap';
import { loadWebModule } from './web-module';

// Declared rather than imported (notification-rules.test.ts says why).
interface Api {
  ApiError: new (status: number, code: string, message: string, retryAfterSeconds?: number | null, details?: Array<{ path: string; message: string }>) => Error;
  describeError(err: unknown): string;
}
const api = loadWebModule<Api>('src/api.ts');

t.test('a detail the message already says is not said twice', async (t) => {
  const one = new api.ApiError(400, 'invalid_request', 'expires_at: must be in the future', null, [{ path: 'expires_at', message: 'must be in the future' }]);
  t.equal(api.describeError(one), 'expires_at: must be in the future');
  const pathless = new api.ApiError(400, 'invalid_request', 'The body is not a image/png image.', null, [{ path: '', message: 'the body is not a image/png image' }]);
  t.equal(api.describeError(pathless), 'The body is not a image/png image.');
});

t.test('details the message does not hold are added, and a 429 says when to try again', async (t) => {
  const two = new api.ApiError(400, 'invalid_request', 'The request is not valid.', null, [
    { path: 'url', message: 'must have a host' },
    { path: 'alias', message: 'is taken' },
  ]);
  t.equal(api.describeError(two), 'The request is not valid. url: must have a host; alias: is taken.');
  const limited = new api.ApiError(429, 'rate_limited', 'Too many requests.', 3);
  t.equal(api.describeError(limited), 'Too many requests. Try again in 3 seconds.');
});
