// The supervisor: the main thread of `perch serve`. It checks that the server can run at all,
// migrates the store, starts the HTTP threads on one shared port, answers their metrics requests,
// and on SIGTERM/SIGINT shuts everything down in order.
import { createServer } from 'node:net';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { MessageChannel, Worker, threadId, type MessagePort } from 'node:worker_threads';
import { Registry, Gauge } from 'prom-client';
import type { Config } from '../config';
import { resolveLogFormat } from '../core/log-line';
import { StartupError, ensureDataDir, secureDataDir } from '../store/data-dir';
import { registerServer, unregisterServer } from '../store/server-registry';
import { holdServerLock } from '../store/server-lock';
import { aggregateMetrics, registryFigures } from './figures';
import { VERSION } from '../version';
import { groupCommitMetrics, processMetrics } from './process-metrics';
import { memoryMetrics } from './memory-metrics';
import { ThreadMemoryTable } from './thread-memory';
import { WORKER_RESOURCE_LIMITS } from './heap-limits';
import { effectivePublicOrigin } from './public-origin';
import { IpBuckets } from '../ratelimit/ip-buckets';
import { log, errorFields, configureLog, LOG_FORMAT_VARIABLE } from '../log';
import type { MetricsJson } from '../http/metrics';
import { loadNativeUws } from '../http/uws';
import { openSqlite, type Sqlite } from '../store/sqlite';
import { startupTasks } from './startup-tasks';
import { migrate } from '../store/migration';
import { clearStaleReaders, openHotStore, tolerateHotStoreCommitFailures, type HotStore } from '../store/lmdb';
import { loadedLmdbAddon } from '../store/lmdb-build';
import { leaseNodeId, liveLeases } from '../store/node-lease';
import { CAPABILITIES, allMigrations, signalLayout } from '../capabilities';
import { WriterClient } from '../writer/client';
import { createPools, startBackground, taskRunner, type BackgroundContext, type BackgroundJob, type RunningBackground } from './background';
import { Signals } from './signals';
import { startHttpServer } from './http-server';
import { missingServeEnvironment, missingServeFlags } from './node-flags';
import type { FromWriter, ThreadData, ToSupervisor, ToThread, ToWriter, WriterData, WriterShared } from './messages';

/** How often the supervisor frees LMDB reader slots left by processes that died holding one. */
const STALE_READER_CHECK_MS = 5000;

/** The one line a server that cannot have its port stops with. */
function portInUse(host: string, port: number): StartupError {
  return new StartupError(`port ${port} on ${host} is already in use`);
}

/** Binds the port once, exclusively, to learn whether it is free (and which port 0 means). */
function probePort(host: string, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(portInUse(host, port));
      else reject(new StartupError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => {
      const addr = probe.address();
      const actual = typeof addr === 'object' && addr ? addr.port : port;
      probe.close(() => resolvePort(actual));
    });
  });
}

/** How many ports a server of several threads asked for port 0 tries before it gives up. */
const PORT_CLAIMS = 5;

/**
 * The port the server will listen on, found free. Threads that share a port do so through
 * SO_REUSEPORT, which lets another process listen on it beside them, so the probe's answer says
 * nothing about a second server started at the same moment: both would pass it and then split
 * the connections. A server of several threads therefore also holds, for as long as it runs, a
 * lock named after the address; the second one finds it taken and refuses, or, asked for port 0,
 * tries another port. A server of one thread holds its port alone (http-server.ts) and needs none.
 */
async function claimPort(host: string, port: number, sharedByThreads: boolean): Promise<number> {
  for (let claim = 1; ; claim++) {
    const actual = await probePort(host, port);
    if (!sharedByThreads || (await holdPortLock(host, actual))) return actual;
    if (port !== 0 || claim === PORT_CLAIMS) throw portInUse(host, actual);
  }
}

/**
 * Takes the lock on host:port among perch servers: a socket in Linux's abstract namespace, which
 * no file backs and the kernel releases when its process ends, however it ends. Resolves false
 * when another process holds it. Other systems have no such namespace: nothing is locked there.
 */
function holdPortLock(host: string, port: number): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(true);
  return new Promise((resolve, reject) => {
    const lock = createServer();
    lock.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(false);
      else reject(new StartupError(`cannot lock ${host}:${port} for this server: ${err.code ?? err.message}`));
    });
    lock.listen({ path: `\0perch port ${host} ${port}` }, () => {
      // Held until the process ends; it must not keep the event loop alive by itself.
      lock.unref();
      resolve(true);
    });
  });
}

/** The supervisor's side of an HTTP server: a worker thread, or the server on the main thread. */
interface HttpEndpoint {
  readonly threadId: number;
  postMessage(m: ToThread): void;
  on(event: 'message', listener: (m: ToSupervisor) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  terminate(): unknown;
}

/**
 * Runs the server's only HTTP server on the main thread: one V8 heap fewer, which is most of what
 * a thread costs at rest (docs/memory.md). It talks to the supervisor over a channel, as a thread
 * of its own would; it ends when it closes its end.
 *
 * It shares the supervisor's hot store handle. lmdb-js lets a synchronous write transaction join
 * the batch that its own handle's un-awaited writes are committing; a second handle on the same
 * thread instead waits for LMDB's write lock, which that batch holds while it waits for this very
 * thread to run its callbacks: the process hangs. The HTTP server writes the click queue without
 * waiting, and the supervisor writes synchronously (its node lease, the server registry).
 */
function httpOnMainThread(data: ThreadData, hot: HotStore): HttpEndpoint {
  const { port1, port2 } = new MessageChannel();
  const events = new EventEmitter();
  port1.on('message', (m: ToSupervisor) => events.emit('message', m));
  port1.once('close', () => events.emit('exit', 0));
  // Started on the next turn, once the supervisor listens to it.
  setImmediate(() => {
    try {
      startHttpServer(data, port2, true, hot);
    } catch (err) {
      events.emit('error', err);
      port1.close();
    }
  });
  return {
    threadId,
    postMessage: (m) => port1.postMessage(m),
    on: (event: string, listener: (...args: any[]) => void) => events.on(event, listener),
    terminate: () => port1.close(),
  };
}

interface ThreadHandle {
  worker: HttpEndpoint;
  index: number;
  /** Listening: it answers requests and metrics collections. */
  ready: boolean;
  stopped: boolean;
  exited: Promise<void>;
  /** Answers its last request: on 'http-stopped' from a thread that runs the writer, else on exit. */
  httpStopped: Promise<void>;
}

export interface ServeOptions {
  config: Config;
  dataDir: string;
}

export async function serve(opts: ServeOptions): Promise<void> {
  // Threads cannot tell whether stdout is a terminal (theirs is a pipe to this one): decided here.
  let config: Config = { ...opts.config, log: { ...opts.config.log, format: resolveLogFormat(opts.config.log.format, process.stdout.isTTY === true) } };
  configureLog(config.log);
  process.env[LOG_FORMAT_VARIABLE] = config.log.format;
  tolerateHotStoreCommitFailures();
  loadNativeUws();
  const dataDir = ensureDataDir(opts.dataDir);
  secureDataDir(dataDir);
  // Before anything is migrated or opened: a server that cannot listen changes nothing (another
  // version already serving this data directory on that port, say).
  const port = await claimPort(config.server.host, config.server.port, config.server.threads > 1);

  let sqlite: Sqlite;
  try {
    sqlite = openSqlite(dataDir);
  } catch (err) {
    // SQLite's code goes along (cli/common.ts, fail, prints it as every command does).
    throw Object.assign(new StartupError(`cannot open the database in ${dataDir}: ${(err as Error).message}`), { code: (err as { code?: unknown }).code });
  }
  const applied = migrate(sqlite, allMigrations());
  for (const m of applied) log.info('migration applied', { version: m.version, name: m.name });
  // Damaged under another server on the same directory, it is left to that server: the start
  // fails with HotStoreDamagedError's line.
  const hot: HotStore = openHotStore(dataDir, {
    repair: true,
    onRepaired: (r) => log.warn('hot store damaged: moved aside, started an empty one', { reason: r.reason, moved_to: r.movedTo }),
  });
  // Held from here to the process's end: a command (or another server starting) then never moves
  // this server's hot store aside (store/server-lock.ts).
  const serverLock = holdServerLock(dataDir);
  const addon = loadedLmdbAddon();
  if (!addon.fixed) {
    log.warn("hot store: lmdb runs a prebuilt addon, without perch's fixes: a command run beside this server (keygen, keys revoke, flags, import, status) can make its hot store writes fail or lose one, and a full disk can crash it; npm install builds the fixed one (docs/architecture.md)", {
      addon: addon.path ?? 'unknown',
    });
  }
  // State that does not refill itself is put back from SQLite after the hot store was replaced.
  if (hot.recovered) {
    for (const c of CAPABILITIES) c.rebuildHot?.(sqlite, hot);
    hot.markRebuilt();
  }

  // Short URLs, the own-origin guard and the web client's policy follow the port really taken.
  config = { ...config, server: { ...config.server, public_origin: effectivePublicOrigin(config, port) } };

  const lease = leaseNodeId(hot);
  // With one HTTP thread it runs on the main thread (httpOnMainThread), and the writer beside it
  // (writer/writer.ts): no hop between threads.
  const httpOnMain = config.server.threads === 1;
  const memoryTable = ThreadMemoryTable.allocate();
  memoryTable.claim(httpOnMain ? 'main' : 'supervisor');
  const pools = createPools(config, dataDir, memoryTable.buffer);
  // The supervisor's own channel to the writer: background jobs write through it too.
  const supervisorChannel = new MessageChannel();
  // Raised by the writer once a change that background work waits for is durable.
  const signals = Signals.allocate(signalLayout());
  const bgContext: BackgroundContext = {
    config,
    dataDir,
    sqlite,
    hot,
    signals,
    newId: () => lease.ids.next(),
    runTask: taskRunner(pools),
    writes: WriterClient.overPort(supervisorChannel.port1),
  };
  let background: RunningBackground | undefined;

  const supervisorRegistry = new Registry();
  new Gauge({
    name: 'perch_http_threads',
    help: 'HTTP threads serving requests.',
    registers: [supervisorRegistry],
    collect() {
      this.set(threads.filter((t) => t.ready && !t.stopped).length);
    },
  });
  new Gauge({
    name: 'perch_node_leases',
    help: 'Live id-generator node leases on this data dir (all processes).',
    registers: [supervisorRegistry],
    collect() {
      this.set(liveLeases(hot).length);
    },
  });

  const figures = registryFigures(supervisorRegistry);
  for (const c of CAPABILITIES) c.gauges?.(figures, bgContext);

  const writerStats = new Float64Array(new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT));
  const redirectTable = IpBuckets.allocate();
  const writerShared: WriterShared = { stats: writerStats.buffer as SharedArrayBuffer, signals: signals.buffer, memory: memoryTable.buffer };
  groupCommitMetrics(supervisorRegistry, writerStats);
  processMetrics(supervisorRegistry);
  memoryMetrics(supervisorRegistry, {
    table: memoryTable,
    hot,
    dataDir,
    aliveThreads() {
      const alive = new Set<number>([0]);
      for (const t of threads) if (!t.stopped) alive.add(t.worker.threadId);
      if (writer) alive.add(writer.worker.threadId);
      for (const w of [...pools.prompt.threads, ...pools.background.threads]) alive.add(w.threadId);
      return alive;
    },
  });

  // Every HTTP thread started, from its start on: one that is still starting when a stop comes is
  // stopped too (it handles the message once it listens), or the process would end while its uWS
  // handles are open, which Node.js answers with an abort.
  const threads: ThreadHandle[] = [];
  let shuttingDown = false;
  let collectId = 0;
  const collecting = new Map<number, { parts: MetricsJson[]; waiting: number; done: (parts: MetricsJson[]) => void }>();

  async function collectMetrics(): Promise<string> {
    const id = ++collectId;
    const live = threads.filter((t) => t.ready && !t.stopped);
    const parts = await new Promise<MetricsJson[]>((done) => {
      const entry = { parts: [] as MetricsJson[], waiting: live.length, done };
      collecting.set(id, entry);
      for (const t of live) t.worker.postMessage({ type: 'collect-metrics', id } satisfies ToThread);
      // A thread that is stopping may never answer; do not hold /metrics hostage to it.
      setTimeout(() => {
        if (collecting.delete(id)) done(entry.parts);
      }, 2000).unref();
    });
    // The same JSON form (prom-client's declarations type its `type` as an enum; it is the name).
    parts.push((await supervisorRegistry.getMetricsAsJSON()) as unknown as MetricsJson);
    return aggregateMetrics(parts);
  }

  // The writer runs every durable write of the request path (writer/writer.ts). On a thread of its
  // own, each HTTP thread gets one end of its own channel to it.
  const writerPorts: MessagePort[] = [];
  let writer: { worker: Worker; exited: Promise<void> } | undefined;

  function startWriter(): Promise<void> {
    if (httpOnMain) return Promise.resolve();
    const threadEnds: MessagePort[] = [];
    for (let i = 0; i < config.server.threads; i++) {
      const { port1, port2 } = new MessageChannel();
      writerPorts.push(port1);
      threadEnds.push(port2);
    }
    threadEnds.push(supervisorChannel.port2);
    const workerData: WriterData = { dataDir, logLevel: config.log.level, ports: threadEnds, ...writerShared };
    const worker = new Worker(join(__dirname, '..', 'writer', 'thread.js'), { workerData, transferList: threadEnds, resourceLimits: WORKER_RESOURCE_LIMITS });
    let resolveExit!: () => void;
    writer = { worker, exited: new Promise((r) => (resolveExit = r)) };
    return new Promise((ready, fail) => {
      worker.on('message', (m: FromWriter) => {
        if (m.type === 'ready') ready();
      });
      worker.on('error', (err) => {
        log.error('writer thread crashed', errorFields(err));
        fail(new StartupError(`writer thread failed: ${err.message}`));
      });
      worker.on('exit', (code) => {
        resolveExit();
        fail(new StartupError(`writer thread exited with code ${code}`));
        if (!shuttingDown) {
          // HTTP threads answer 503 to every write meanwhile (their channels closed); restart all.
          log.error('writer thread exited unexpectedly; shutting down', { code });
          void shutdown(1);
        }
      });
    });
  }

  function startThread(index: number): Promise<ThreadHandle> {
    const workerData: ThreadData = httpOnMain
      ? { config, dataDir, port, threadIndex: index, redirectTable, signals: signals.buffer, memory: memoryTable.buffer, writer: { ports: [supervisorChannel.port2], ...writerShared } }
      : { config, dataDir, port, threadIndex: index, redirectTable, signals: signals.buffer, memory: memoryTable.buffer, writerPort: writerPorts[index] };
    const worker: HttpEndpoint = httpOnMain
      ? httpOnMainThread(workerData, hot)
      : new Worker(join(__dirname, 'http-thread.js'), { workerData, transferList: [writerPorts[index]], resourceLimits: WORKER_RESOURCE_LIMITS });
    let resolveExit!: () => void;
    let resolveHttpStopped!: () => void;
    const handle: ThreadHandle = {
      worker,
      index,
      ready: false,
      stopped: false,
      exited: new Promise((r) => (resolveExit = r)),
      httpStopped: new Promise((r) => (resolveHttpStopped = r)),
    };
    threads.push(handle);
    return new Promise((ready, fail) => {
      worker.on('message', (m: ToSupervisor) => {
        switch (m.type) {
          case 'ready':
            log.debug('http thread ready', { index, node_id: m.nodeId });
            handle.ready = true;
            ready(handle);
            break;
          case 'listen-failed':
            // Its end is expected: start-up fails as a whole below.
            handle.stopped = true;
            void worker.terminate();
            fail(new StartupError(m.message));
            break;
          case 'metrics-request':
            collectMetrics().then(
              (text) => worker.postMessage({ type: 'metrics-text', id: m.id, text } satisfies ToThread),
              (err) => {
                log.error('metrics collection failed', errorFields(err));
                worker.postMessage({ type: 'metrics-text', id: m.id, text: '' } satisfies ToThread);
              },
            );
            break;
          case 'metrics-part': {
            const entry = collecting.get(m.id);
            if (!entry) break;
            entry.parts.push(m.data);
            if (--entry.waiting === 0) {
              collecting.delete(m.id);
              entry.done(entry.parts);
            }
            break;
          }
          case 'http-stopped':
            resolveHttpStopped();
            break;
          case 'writer-failed':
            log.error('the writer could not make writes durable; shutting down');
            void shutdown(1);
            break;
          case 'stopped':
            handle.stopped = true;
            break;
        }
      });
      worker.on('error', (err) => {
        log.error('http thread crashed', { index, ...errorFields(err) });
        fail(new StartupError(`http thread ${index} failed to start: ${err.message}`));
      });
      worker.on('exit', (code) => {
        const expected = handle.stopped;
        handle.stopped = true;
        resolveExit();
        resolveHttpStopped();
        if (!shuttingDown && !expected) {
          // A thread that dies on its own leaves the server half-serving; fail fast so the
          // service manager restarts the whole appliance cleanly.
          log.error('http thread exited unexpectedly; shutting down', { index, code });
          void shutdown(1);
        }
      });
    });
  }

  async function shutdown(exitCode: number): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info('shutting down', { threads: threads.length });
    const deadline = config.server.shutdown_timeout_seconds * 1000;
    const force = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(exitCode || 1);
    }, deadline + 1500);
    force.unref();
    for (const t of threads) t.worker.postMessage({ type: 'stop' } satisfies ToThread);
    await Promise.all(threads.map((t) => t.httpStopped));
    try {
      // No request is coming any more, so nothing new is queued: flush the queues (through the
      // writer, where they write SQLite) while the writer still runs.
      await background?.stop();
    } catch (err) {
      log.error('flushing background work failed', errorFields(err));
    }
    // Every request is answered and the queues are flushed, so the writer has nothing more
    // coming: it commits what it holds and closes its connection before the rest closes.
    if (writer) {
      writer.worker.postMessage({ type: 'stop' } satisfies ToWriter);
      await writer.exited;
    }
    if (httpOnMain) for (const t of threads) t.worker.postMessage({ type: 'stop-writer' } satisfies ToThread);
    await Promise.all(threads.map((t) => t.exited));
    try {
      await Promise.all([pools.prompt.destroy(), pools.background.destroy()]);
      unregisterServer(hot);
      lease.release();
      sqlite.close();
      await hot.close();
      serverLock.release();
    } catch (err) {
      log.error('closing stores failed', errorFields(err));
    }
    log.notice('stopped');
    process.exit(exitCode);
  }

  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGINT', () => void shutdown(0));

  // A stop (SIGTERM, a failed writer) may come at any moment of the start: from then on, the start
  // starts nothing more (shutdown stops what was started and ends the process).
  try {
    await startWriter();
    if (shuttingDown) return;
    // The work before listening (a first fill of the code pool, a first search index) runs on
    // this thread (server/startup-tasks.ts): in the server's pool, the threads it started would
    // stay up, with their heaps, for the idle timeout after start, and any thread started for it
    // leaves its malloc arena behind (docs/memory.md).
    const startup = startupTasks(config, dataDir, hot);
    const prepareContext: BackgroundContext = { ...bgContext, runTask: startup.runTask };
    try {
      await Promise.all(
        CAPABILITIES.map((c) => c.prepare?.(prepareContext).catch((err) => log.error('background preparation failed', { capability: c.name, ...errorFields(err) }))),
      );
    } finally {
      startup.end();
    }
    if (shuttingDown) return;
    // The HTTP threads start side by side: each spends most of its start loading modules into
    // its own isolate. The first failure ends start-up (a thread that failed to listen has been
    // terminated already).
    const starting = await Promise.allSettled(Array.from({ length: config.server.threads }, (_, i) => startThread(i)));
    const failed = starting.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    if (shuttingDown) return;
    process.stderr.write(`perch: ${(err as Error).message}\n`);
    await shutdown(1);
  }
  if (shuttingDown) return;
  const staleReaders: BackgroundJob = {
    name: 'hot.staleReaders',
    everyMs: STALE_READER_CHECK_MS,
    run(c) {
      const freed = clearStaleReaders(c.hot);
      if (freed > 0) log.warn('hot store: freed reader slots of processes that ended without closing it', { slots: freed });
    },
  };
  background = startBackground([...CAPABILITIES.flatMap((c) => c.jobs?.(bgContext) ?? []), staleReaders], bgContext);
  const url = `http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${port}`;
  registerServer(hot, { pid: process.pid, version: VERSION, startedAt: new Date().toISOString(), host: config.server.host, port, publicOrigin: config.server.public_origin, threads: threads.length });
  const missing = [...missingServeEnvironment(), ...missingServeFlags()];
  if (missing.length > 0) log.info('started without the settings perch serve is meant to run with: it uses more memory (docs/memory.md)', { missing: missing.join(' ') });
  log.notice('listening', { host: config.server.host, port, threads: threads.length, data: dataDir, url, public_origin: config.server.public_origin, version: VERSION });
}
