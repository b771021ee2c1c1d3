import t from 'tap';
import { formatRecord, humanLine, resolveLogFormat } from '../../src/core/log-line';

t.test('auto: human on a terminal, JSON elsewhere; explicit settings win', async (t) => {
  t.equal(resolveLogFormat('auto', true), 'human');
  t.equal(resolveLogFormat('auto', false), 'json');
  t.equal(resolveLogFormat('json', true), 'json');
  t.equal(resolveLogFormat('human', false), 'human');
});

t.test('a human line: time, level, thread, message, fields', async (t) => {
  t.equal(
    humanLine({ time: '2026-11-22T13:45:00.123Z', level: 'info', msg: 'listening', thread: 0, host: '127.0.0.1', port: 8080, threads: 1 }),
    '13:45:00.123 INFO  listening host=127.0.0.1 port=8080 threads=1',
  );
  t.equal(
    humanLine({ time: '2026-11-22T13:45:00.123Z', level: 'warn', msg: 'odd', thread: 3, note: 'two words', empty: '', quote: 'a"b', list: [1, 2], obj: { a: 1 }, none: null, yes: true }),
    '13:45:00.123 WARN  [3] odd note="two words" empty="" quote="a\\"b" list=[1,2] obj={"a":1} none=null yes=true',
  );
  t.equal(
    humanLine({ time: '2026-11-22T13:45:00.123Z', level: 'error', msg: 'request failed', thread: 1, request_id: '1-a', error: 'boom', stack: 'Error: boom\n    at f (x.js:1:2)\n    at g (y.js:3:4)' }),
    '13:45:00.123 ERROR [1] request failed request_id=1-a error=boom\n    Error: boom\n    at f (x.js:1:2)\n    at g (y.js:3:4)',
  );
});

t.test('JSON lines are the record as it is', async (t) => {
  const record = { time: '2026-11-22T13:45:00.123Z', level: 'info', msg: 'request', thread: 1, method: 'GET', path: '/api/me', status: 200 };
  t.equal(formatRecord(record, 'json'), '{"time":"2026-11-22T13:45:00.123Z","level":"info","msg":"request","thread":1,"method":"GET","path":"/api/me","status":200}');
  t.equal(formatRecord(record, 'human'), '13:45:00.123 INFO  [1] request method=GET path=/api/me status=200');
});
