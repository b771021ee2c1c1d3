// The baseline of the microblog benchmarks: a bare uWS server doing the least the real endpoint
// must do. `json201`: read the body, JSON.parse it, answer 201 with a JSON object of the size a
// created post answers with. `constant <bytes>`: answer GET with a constant JSON body of that size.
// `groupcommit <dir>`: a second reference for posts, the smallest durable version of json201 — one
// thread that stores each event-loop turn's posts (row + outbox row) in one SQLite transaction
// committed with synchronous=FULL, then answers them; no auth, no checks, no fan-out. It shows
// what a group commit alone reaches on this machine.
// Prints its port on stdout and runs until killed.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { HttpResponse } from 'uWebSockets.js';
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
} else if (mode === 'groupcommit') {
  const db = new Database(join(process.argv[3], 'groupcommit.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS posts (id INTEGER PRIMARY KEY, author_id TEXT NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS posts_author ON posts(author_id, id);
    CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, post_id TEXT NOT NULL, created_at TEXT NOT NULL);`);
  const insertPost = db.prepare('INSERT INTO posts (id, author_id, text, created_at) VALUES (?, ?, ?, ?)');
  const insertEvent = db.prepare("INSERT INTO events (type, post_id, created_at) VALUES ('post_created', ?, ?)");
  interface Pending { res: HttpResponse; aborted: boolean; id: number; author: string; text: string; at: string }
  let queue: Pending[] = [];
  let nextId = 1;
  const commit = db.transaction((batch: Pending[]) => {
    for (const p of batch) {
      insertPost.run(p.id, p.author, p.text, p.at);
      insertEvent.run(String(p.id), p.at);
    }
  });
  const flush = () => {
    const batch = queue;
    queue = [];
    commit.immediate(batch);
    for (const p of batch) {
      if (p.aborted) continue;
      const reply = JSON.stringify({ id: String(p.id), text: p.text, author_id: p.author, media_ids: [], reply_to: null, created_at: p.at });
      p.res.cork(() => {
        p.res.writeStatus('201 Created');
        p.res.writeHeader('Content-Type', 'application/json');
        p.res.end(reply);
      });
    }
  };
  app.post('/*', (res) => {
    const p: Pending = { res, aborted: false, id: 0, author: 'author' + (nextId % 50), text: '', at: '' };
    res.onAborted(() => (p.aborted = true));
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast || p.aborted) return;
      p.text = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string }).text.normalize('NFC');
      p.id = nextId++;
      p.at = new Date().toISOString();
      if (queue.push(p) === 1) setImmediate(flush);
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
