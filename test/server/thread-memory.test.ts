// The per-thread heap table and the parsers behind perch_thread_heap_* and perch status.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { heapsByKind, MEMORY_SLOTS, parseResident, residentOf, ThreadMemoryTable } from '../../src/server/thread-memory';

t.test('parseResident reads VmRSS, RssAnon, RssFile and VmHWM in bytes; a missing field is NaN', async (t) => {
  const status = ['Name:\tnode', 'VmHWM:\t  204800 kB', 'VmRSS:\t  102400 kB', 'RssAnon:\t   61440 kB', 'RssFile:\t   40960 kB', 'Threads:\t7'].join('\n');
  t.same(parseResident(status), { total: 100 * 1048576, anonymous: 60 * 1048576, file: 40 * 1048576, peak: 200 * 1048576 });
  t.ok(Number.isNaN(parseResident('VmRSS:\t 1 kB').anonymous));
});

t.test('residentOf reads a live process; a process that is gone has none', async (t) => {
  const own = residentOf(process.pid)!;
  t.ok(own.total > 1024 * 1024, `resident set ${own.total} bytes`);
  t.ok(own.anonymous > 0 && own.anonymous <= own.total);
  t.ok(own.peak >= own.total);
  t.same(residentOf('self')!.total > 0, true);
  // pid_max is at most 2^22 on Linux, so no process has this id.
  t.equal(residentOf(2 ** 23), undefined);
});

t.test('heapsByKind sums the heap in use per kind of thread and counts the threads', async (t) => {
  const text = [
    '# HELP perch_thread_heap_used_bytes V8 heap in use, per thread',
    '# TYPE perch_thread_heap_used_bytes gauge',
    'perch_thread_heap_used_bytes{kind="supervisor",thread="0"} 1000',
    'perch_thread_heap_used_bytes{kind="http",thread="3"} 2000',
    'perch_thread_heap_used_bytes{kind="http",thread="4"} 3000',
    'perch_thread_heap_used_bytes{thread="5",kind="pool"} 500',
    'perch_thread_heap_used_bytes{kind="unknown",thread="9"} 7',
    'perch_thread_heap_total_bytes{kind="http",thread="3"} 99999',
  ].join('\n');
  t.same(heapsByKind(text), {
    supervisor: { threads: 1, heapUsedBytes: 1000 },
    http: { threads: 2, heapUsedBytes: 5000 },
    pool: { threads: 1, heapUsedBytes: 500 },
  });
  t.same(heapsByKind(''), {});
});

t.test('each thread claims its own slot; the slots of ended threads are forgotten', async (t) => {
  const table = ThreadMemoryTable.allocate();
  t.ok(table.claim('supervisor'));
  const [own] = table.read();
  t.equal(own.kind, 'supervisor');
  t.equal(own.threadId, 0);
  t.ok(own.heapUsedBytes > 0 && own.heapUsedBytes <= own.heapTotalBytes, 'heap used is positive and within the heap');

  const code = `
    const { workerData, parentPort, threadId } = require('node:worker_threads');
    const { ThreadMemoryTable } = require(workerData.module);
    const t = new ThreadMemoryTable(workerData.buffer);
    t.claim('pool');
    parentPort.postMessage(threadId);
    parentPort.once('message', () => process.exit(0));`;
  const worker = new Worker(code, { eval: true, workerData: { buffer: table.buffer, module: require.resolve('../../src/server/thread-memory') } });
  const workerId = await new Promise<number>((resolve) => worker.once('message', resolve));
  t.same(
    table.read().map((h) => [h.kind, h.threadId]),
    [['supervisor', 0], ['pool', workerId]],
  );
  worker.postMessage('end');
  await new Promise((resolve) => worker.once('exit', resolve));
  table.forgetExcept(new Set([0]));
  t.same(table.read().map((h) => h.kind), ['supervisor'], 'the ended thread left the table');
  table.release();
  t.same(table.read(), []);
});

t.test('a full table refuses a claim instead of sharing a slot', async (t) => {
  const table = ThreadMemoryTable.allocate();
  // Fill every slot as if other threads held them.
  const ints = new Int32Array(table.buffer);
  for (let s = 0; s < MEMORY_SLOTS; s++) ints[s * 8] = 1000 + s;
  t.notOk(table.claim('http'));
  t.equal(table.read().length, MEMORY_SLOTS);
});
