import t from 'tap';
import { createECDH, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateVAPIDKeys } from 'web-push';
import { PushSender, retryAfter, type PushOutcome } from '../../src/notifications/push-sender';
import type { PushTarget } from '../../src/notifications/store';

function target(endpoint: string): PushTarget {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { id: '1', user_id: 'u', endpoint, p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

function sender(allowInsecure: boolean, outcomes: PushOutcome[]): PushSender {
  return new PushSender({ vapid: { subject: 'mailto:ops@example.org', ...generateVAPIDKeys() }, allowInsecure, retryBaseMs: 10, report: (o) => outcomes.push(o), gone: () => {} });
}

async function settled(s: PushSender): Promise<void> {
  for (let i = 0; i < 500 && s.pending > 0; i++) await new Promise((r) => setTimeout(r, 10));
}

t.test('a name that resolves to a private address is refused before any request', async (t) => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(201).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const port = (server.address() as AddressInfo).port;
  const outcomes: PushOutcome[] = [];
  const strict = sender(false, outcomes);
  strict.send(target(`http://localhost:${port}/a`), '{}');
  strict.send(target(`http://127.0.0.1:${port}/b`), '{}');
  await settled(strict);
  t.same(outcomes, ['refused', 'refused']);
  t.equal(requests, 0, 'nothing was sent');
  const lax = sender(true, outcomes);
  lax.send(target(`http://localhost:${port}/c`), '{}');
  await settled(lax);
  t.same(outcomes.slice(2), ['delivered']);
  t.equal(requests, 1);
});

t.test('retryAfter reads seconds and HTTP dates', async (t) => {
  const now = Date.parse('2026-11-22T13:00:00.000Z');
  t.equal(retryAfter(undefined, now), 0);
  t.equal(retryAfter('7', now), 7000);
  t.equal(retryAfter('Sun, 22 Nov 2026 13:00:30 GMT', now), 30_000);
  t.equal(retryAfter('Sun, 22 Nov 2026 12:00:00 GMT', now), 0, 'a date in the past');
  t.equal(retryAfter('soon', now), 0);
});
