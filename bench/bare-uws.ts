// The baselines of `perch bench`: a bare uWS server doing the least the real endpoint must do.
// `redirect302`: answer GET with a constant 302 and the headers of perch's redirect.
// `json201`: read the body, JSON.parse it, answer 201 with a JSON object of the size a
// created post answers with. `created201 <bytes>`: the same with a constant body of that size and a
// Location header (a created link). `constant <bytes>`: answer GET with a constant JSON body of
// that size. `mixed <bytes>`: every request of the mixed traffic answered with its kind of
// answer: GET and HEAD of a short code a 302, GET of /api/… a constant body of that size, POST a
// 201 after reading the body.
// `groupcommit <dir>`: a second reference for posts, the smallest durable version of json201 — one
// thread that stores each event-loop turn's posts (row + outbox row) in one SQLite transaction
// committed with synchronous=FULL, then answers them; no auth, no checks, no fan-out, and no
// index but the tables' keys (perch files posts under their authors after the commit, too). It
// shows what a group commit alone reaches on this machine.
// Prints its port on stdout and runs until killed.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { HttpResponse } from 'uWebSockets.js';
import { loadNativeUws } from '../src/http/uws';

const uws = loadNativeUws();
const mode = process.argv[2] ?? 'json201';
const size = Number(process.argv[3] ?? 0);
const app = uws.App();

/** Whether the client went away before its answer; read when the answer is due. */
interface Incoming {
  aborted: boolean;
}

/** Reads a POST body to its end and hands over its JSON `text`, unless the client went away. */
function readPostText(res: HttpResponse, done: (text: string, incoming: Incoming) => void): void {
  const incoming: Incoming = { aborted: false };
  res.onAborted(() => (incoming.aborted = true));
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || incoming.aborted) return;
    done((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string }).text, incoming);
  });
}

/** Answers 201 with a created post's JSON (the shape perch answers with). */
function answerCreated(res: HttpResponse, post: { id: string; text: string; author_id: string; created_at: string }): void {
  const reply = JSON.stringify({ id: post.id, text: post.text, author_id: post.author_id, media_ids: [], reply_to: null, created_at: post.created_at });
  res.cork(() => {
    res.writeStatus('201 Created');
    res.writeHeader('Content-Type', 'application/json');
    res.end(reply);
  });
}

/** A constant JSON body of `bytes` bytes. */
function constantBody(bytes: number): string {
  return JSON.stringify({ items: [], next_cursor: null, pad: 'x'.repeat(Math.max(0, bytes - 42)) });
}

/** Reads the body to its end and answers 201 with `body` (and a Location, as a creation does). */
function created(res: HttpResponse, body: string): void {
  const incoming: Incoming = { aborted: false };
  res.onAborted(() => (incoming.aborted = true));
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || incoming.aborted) return;
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.length > 0) JSON.parse(text);
    res.cork(() => {
      res.writeStatus('201 Created');
      res.writeHeader('Location', '/api/links/a1B2c3D');
      res.writeHeader('Content-Type', 'application/json');
      res.end(body);
    });
  });
}

function redirect302(res: HttpResponse): void {
  res.writeStatus('302 Found');
  res.writeHeader('Location', 'https://example.com/some/landing/page?utm_source=bench');
  res.writeHeader('Cache-Control', 'private, no-store');
  res.end();
}

if (mode === 'redirect302') {
  app.get('/*', redirect302);
} else if (mode === 'created201') {
  const body = constantBody(size);
  app.post('/*', (res) => created(res, body));
} else if (mode === 'mixed') {
  const body = constantBody(size);
  const small = constantBody(60);
  app.get('/api/*', (res) => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
  app.get('/*', redirect302);
  app.head('/*', redirect302);
  app.post('/*', (res) => created(res, small));
} else if (mode === 'json201') {
  app.post('/*', (res) => {
    readPostText(res, (text) => answerCreated(res, { id: '382893587576131584', text, author_id: '382893586405924864', created_at: new Date().toISOString() }));
  });
} else if (mode === 'groupcommit') {
  const db = new Database(join(process.argv[3], 'groupcommit.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS posts (id INTEGER PRIMARY KEY, author_id TEXT NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, post_id TEXT NOT NULL, created_at TEXT NOT NULL);`);
  const insertPost = db.prepare('INSERT INTO posts (id, author_id, text, created_at) VALUES (?, ?, ?, ?)');
  const insertEvent = db.prepare("INSERT INTO events (type, post_id, created_at) VALUES ('post_created', ?, ?)");
  interface Pending { res: HttpResponse; incoming: Incoming; id: number; author: string; text: string; at: string }
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
      if (!p.incoming.aborted) answerCreated(p.res, { id: String(p.id), text: p.text, author_id: p.author, created_at: p.at });
    }
  };
  app.post('/*', (res) => {
    const author = 'author' + (nextId % 50);
    readPostText(res, (text, incoming) => {
      const p: Pending = { res, incoming, id: nextId++, author, text: text.normalize('NFC'), at: new Date().toISOString() };
      if (queue.push(p) === 1) setImmediate(flush);
    });
  });
} else {
  const body = constantBody(size);
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
