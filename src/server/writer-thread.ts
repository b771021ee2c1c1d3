// Entry point of the writer thread, used when the server has several HTTP threads (with one, the
// writer runs inside it: server/writer.ts). Each HTTP thread and the supervisor have a MessagePort
// to it, created by the supervisor.
import { parentPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../log';
import { Writer } from './writer';
import type { ToWriter, WriterData, FromWriter } from './messages';

const data = workerData as WriterData;
const control = parentPort!;
setLogLevel(data.logLevel);

// The 503s of a failed sync were posted before the exit; the supervisor then shuts down.
const writer = new Writer(data.dataDir, new Float64Array(data.stats), () => process.exit(1), new Int32Array(data.newPosts));
for (const port of data.ports) writer.listen(port);

control.on('message', (m: ToWriter) => {
  if (m.type !== 'stop') return;
  // The HTTP threads are gone and the background jobs flushed: nothing more is coming.
  void writer.stop().then(() => {
    control.postMessage({ type: 'stopped' } satisfies FromWriter);
    control.close();
  });
});

control.postMessage({ type: 'ready' } satisfies FromWriter);
