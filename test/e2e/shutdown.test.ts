// Graceful shutdown: a request in flight when SIGTERM arrives is finished, new connections are
// refused, and the process exits 0; a SIGTERM during start-up ends the start the same way.
import t from 'tap';
import { pinnedThreadsTest } from '../helpers/command-test';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../../src/server/node-flags';
import { PERCH, cleanEnv, endWithTestProcess, freePort, startServer, tempDataDir, untraced } from '../helpers/server';

function readResponse(sock: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    sock.on('data', (d) => {
      data += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
    });
    sock.on('close', () => resolve(data));
  });
}

t.test('an upload in flight at SIGTERM completes with 201; then the server exits 0', async (t) => {
  const server = await startServer();
  // The server exits by itself below; closing it then only removes its data directory.
  t.teardown(() => server.close());
  const key = await server.keygen('uploader');
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4000, 9)]);

  const sock = connect(server.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const response = readResponse(sock);
  sock.write(
    `POST /api/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key.key}\r\n` +
      `Content-Type: image/png\r\nContent-Length: ${png.length}\r\n\r\n`,
  );
  sock.write(png.subarray(0, 1000));
  // Time for the server to read the head and start the upload (nothing outside it tells when it
  // has): far more than it takes, so that a starved machine has it under way before the signal.
  await new Promise((r) => setTimeout(r, 1000));

  const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
  server.proc.kill('SIGTERM');

  // The listen socket is closed: a new connection is refused while the upload is still open.
  // Probed until refused (within 5 s, well inside the shutdown timeout the upload has): the
  // signal reaches the HTTP threads after a moment, later on a starved machine.
  const refusedNow = () =>
    new Promise<boolean>((resolve) => {
      const probe = connect(server.port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => resolve(true));
    });
  let refused = false;
  for (const deadline = Date.now() + 5000; !refused && Date.now() < deadline; ) {
    refused = await refusedNow();
    if (!refused) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(refused, true, 'new connections are refused during shutdown');

  sock.write(png.subarray(1000));
  const text = await response;
  sock.destroy();
  t.match(text, /^HTTP\/1\.1 201 Created/, 'the in-flight upload was answered');
  t.match(text, /"content_type":"image\/png","size":4008/);
  t.equal(await exited, 0);
});

/** Whether something answers GET /healthz on `port` now. */
function answers(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => r.body?.cancel().then(() => true) ?? true,
    () => false,
  );
}

/**
 * Starts `perch serve` with two HTTP threads (a writer thread and two HTTP threads, started side
 * by side) and sends SIGTERM when `moment` says so; resolves with how the process ended. (Before
 * the writer starts, while the stores open and migrate, a SIGTERM ends the process at once, which
 * those steps are safe against: docs/architecture.md, "Shutdown".)
 */
async function stopDuringStart(moment: 'preparation' | 'first answer'): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  const dataDir = tempDataDir();
  const port = await freePort();
  const env = { ...cleanEnv(), ...SERVE_ENVIRONMENT };
  const command = untraced([process.execPath, ...SERVE_NODE_FLAGS, PERCH, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data', dataDir, '--threads', '2'], env);
  const proc = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  endWithTestProcess(proc);
  let stdout = '';
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  let sent = false;
  const stop = () => {
    if (!sent) proc.kill('SIGTERM');
    sent = true;
  };
  proc.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    // Logged while the capabilities prepare, once the writer thread runs (a new data directory).
    if (moment === 'preparation' && stdout.includes('VAPID key pair generated')) stop();
  });
  if (moment === 'first answer') {
    // As soon as one HTTP thread listens: the other may still be loading its modules.
    let exited = false;
    void ended.then(() => (exited = true));
    while (!exited && !(await answers(port))) await new Promise((r) => setTimeout(r, 2));
    stop();
  }
  const end = await ended;
  rmSync(dataDir, { recursive: true, force: true });
  return { ...end, stdout, stderr };
}

for (const moment of ['preparation', 'first answer'] as const) {
  pinnedThreadsTest(`a SIGTERM at the start's ${moment} (two HTTP threads): the start ends, and the process exits 0`, async (t) => {
    const r = await stopDuringStart(moment);
    t.equal(r.signal, null, 'not ended by a signal (an abort: a thread ended with its sockets open)');
    t.equal(r.code, 0, 'exit code');
    t.notMatch(r.stderr, /Assertion failed|open handles/, 'no thread ended with uWS handles open');
    t.equal(r.stderr, '', 'nothing on stderr: a stop, not a failed start');
    t.match(r.stdout, /"msg":"shutting down"/);
    t.match(r.stdout, /"msg":"stopped"/);
  });
}

pinnedThreadsTest('clients that keep their connections busy do not hold a stopping server open (two HTTP threads)', async (t) => {
  // A long deadline: a server that waited for it would be plain to see.
  const server = await startServer({
    threads: 2,
    config: {
      server: { shutdown_timeout_seconds: 60 },
      limits: { shorten: { capacity: 100_000, refill_per_second: 10_000, burst_per_second: 10_000, daily_quota: 1_000_000 } },
      anomaly: { max_links: 1_000_000, max_same_domain: 1_000_000 },
    },
  });
  t.teardown(() => server.close());
  const key = await server.keygen('busy');
  // Keep-alive clients, each sending its next request as soon as the last is answered: links
  // made, edited and deleted (edits and deletions wait for the other thread to drop its cache).
  let running = true;
  let afterStop = 0;
  let stopAt = 0;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      try {
        const made = await server.post('/api/shorten', { key: key.key, json: { url: `https://example.com/${n}/${i}` } });
        if (made.status !== 201) continue;
        const code = made.json.short_code;
        await server.request('PATCH', `/api/links/${code}`, { key: key.key, json: { url: `https://example.com/${n}/${i}/b` } });
        await server.request('DELETE', `/api/links/${code}`, { key: key.key });
        if (stopAt && Date.now() > stopAt) afterStop++;
      } catch {
        // Refused or closed: the server is going.
        if (stopAt) return;
      }
    }
  };
  const clients = Array.from({ length: 20 }, (_, n) => client(n));
  await new Promise((r) => setTimeout(r, 1500));
  stopAt = Date.now();
  const code = await server.stop();
  const tookMs = Date.now() - stopAt;
  running = false;
  await Promise.all(clients);
  t.equal(code, 0, 'exit code');
  t.ok(tookMs < 30_000, `stopped without waiting for its 60 s deadline (${tookMs} ms)`);
  t.notOk(server.logs.some((l) => l.includes('shutdown timed out')), 'no timeout');
  t.notOk(server.logs.some((l) => l.includes('not acknowledged by every thread')), 'no thread waited for one that had stopped');
  t.comment(`${afterStop} rounds finished after SIGTERM`);
});
