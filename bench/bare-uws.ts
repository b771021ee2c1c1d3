// The baseline of the microblog benchmarks: a bare uWS server doing the least the real endpoint
// must do. `json201`: read the body, JSON.parse it, answer 201 with a JSON object of the size a
// created post answers with. `constant <bytes>`: answer GET with a constant JSON body of that size.
// Prints its port on stdout and runs until killed.
import { loadNativeUws } from '../src/http/uws';

const uws = loadNativeUws();
const mode = process.argv[2] ?? 'json201';
const size = Number(process.argv[3] ?? 0);
const app = uws.App();

if (mode === 'json201') {
  app.post('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast || aborted) return;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string };
      const reply = JSON.stringify({ id: '382893587576131584', text: body.text, author_id: '382893586405924864', media_ids: [], reply_to: null, created_at: new Date().toISOString() });
      res.cork(() => {
        res.writeStatus('201 Created');
        res.writeHeader('Content-Type', 'application/json');
        res.end(reply);
      });
    });
  });
} else {
  const body = JSON.stringify({ items: [], next_cursor: null, pad: 'x'.repeat(Math.max(0, size - 42)) });
  app.get('/*', (res) => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
}

app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) process.exit(1);
  process.stdout.write(`${uws.us_socket_local_port(sock)}\n`);
});
