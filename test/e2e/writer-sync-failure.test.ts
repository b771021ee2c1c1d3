// A write that cannot be made durable is never answered 201: when syncing the write-ahead log
// fails, the writes it covered are answered 503 and the server stops (exit 1) rather than serve
// on a store whose unsynced pages the kernel may have dropped. The failure is provoked by removing
// the log file before the writer's first sync, so opening it for the sync fails.
import t from 'tap';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../helpers/server';
import { logLine } from '../helpers/logs';

t.test('a failed log sync answers 503 and stops the server with exit 1', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const author = await server.keygen('author');
  server.expectExit();
  const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
  unlinkSync(join(server.dataDir, 'perch.db-wal'));

  const r = await server.post('/api/posts', { key: author.key, json: { text: 'never acknowledged' } });
  t.equal(r.status, 503);
  t.equal(r.json.error, 'unavailable');
  t.equal(r.json.message, 'The write could not be made durable; try again shortly.');
  t.equal(r.headers.get('retry-after'), '1');
  t.equal(await exited, 1, 'the server stops');
  // The process may exit before the test has read all its stdout: the line is waited for.
  t.ok(
    await logLine(server, (line) => line.includes('syncing the write-ahead log failed')),
    'the failure is logged',
  );
});
