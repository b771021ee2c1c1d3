// Entry point of the writer thread, used when the server has several HTTP threads (with one, the
// writer runs inside it: writer.ts). Each HTTP thread and the supervisor have a MessagePort to
// it, made by the supervisor. This entry point is where the writer meets the capabilities: it
// takes their operations, jobs and signals from the one list (capabilities.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../log';
import { signalLayout, writerSetup } from '../capabilities';
import { Signals } from '../server/signals';
import type { ToWriter, WriterData, FromWriter } from '../server/messages';
import { Writer } from './writer';
import { ThreadMemoryTable } from '../server/thread-memory';

const data = workerData as WriterData;
const MEMORY_REPORT_MS = 2000;
const control = parentPort!;
setLogLevel(data.logLevel);

const signals = new Signals(data.signals, signalLayout());
const writer = new Writer({
  dataDir: data.dataDir,
  setup: writerSetup(),
  stats: new Float64Array(data.stats),
  // The 503s of a failed sync were posted before the exit; the supervisor then shuts down.
  onSyncFailure: () => process.exit(1),
  raise: (name) => signals.raise(name),
});
for (const port of data.ports) writer.listen(port);

// Nobody asks the writer for its heap: it writes its figures down every few seconds.
const memory = data.memory ? new ThreadMemoryTable(data.memory) : undefined;
memory?.claim('writer');
const memoryTimer = setInterval(() => memory?.report(), MEMORY_REPORT_MS);
memoryTimer.unref();

control.on('message', (m: ToWriter) => {
  if (m.type !== 'stop') return;
  // The HTTP threads are gone and the background jobs flushed: nothing more is coming.
  void writer.stop().then(() => {
    clearInterval(memoryTimer);
    memory?.release();
    control.postMessage({ type: 'stopped' } satisfies FromWriter);
    control.close();
  });
});

control.postMessage({ type: 'ready' } satisfies FromWriter);
