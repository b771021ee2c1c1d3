// Graceful shutdown: a request in flight when SIGTERM arrives is finished, new connections are
// refused, and the process exits 0.
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { startServer } from '../helpers/server';

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
