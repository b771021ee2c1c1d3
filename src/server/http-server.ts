// One HTTP server: its own uWS app on the shared port, its own store handles, talking to the
// supervisor over a message port. It runs in a worker thread of its own (server/http-thread.ts),
// or, when it is the server's only one, on the main thread beside the supervisor (docs/memory.md).
import type { MessagePort } from 'node:worker_threads';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { setLogLevel, log, errorFields } from '../log';
import { hashApiKey } from '../core/api-key';
import { PrincipalCache, revocationVersion } from '../accounts/key-cache';
import { createThreadMetrics } from '../http/metrics';
import { Router, inFlight } from '../http/router';
import { wrapApp } from '../http/app-wrap';
import { CorsPolicy } from '../http/cors';
import { loadNativeUws } from '../http/uws';
import { tolerateHotStoreCommitFailures, type HotStore } from '../store/lmdb';
import { CAPABILITIES, signalLayout, writerSetup } from '../capabilities';
import type { CapabilityThread } from '../capability';
import { Writer } from '../writer/writer';
import { WriterClient } from '../writer/client';
import { answersQuery } from '../store/sqlite';
import { hotStoreOpen } from '../store/lmdb';
import { openThreadContext } from './thread-context';
import { systemRoutes } from './routes';
import { RESERVED_PATHS } from '../core/short-code';
import { Signals } from './signals';
import type { ThreadData, ToSupervisor, ToThread } from './messages';
import { ThreadMemoryTable } from './thread-memory';

/** LIBUS_LISTEN_EXCLUSIVE_PORT: a listening socket without SO_REUSEPORT. */
const LISTEN_EXCLUSIVE_PORT = 1;

/** uWS's listen with a host and options, which its type declarations leave out (the addon takes it). */
function listenExclusive(app: TemplatedApp, host: string, port: number, cb: (sock: us_listen_socket | false) => void): void {
  (app.listen as unknown as (host: string, port: number, options: number, cb: (sock: us_listen_socket | false) => void) => void).call(app, host, port, LISTEN_EXCLUSIVE_PORT, cb);
}

/**
 * Starts serving. `port` is the supervisor's channel; on the main thread the heap figures are the
 * supervisor's own, reported once under its kind, so the server claims no slot of its own, and
 * `mainHot` is the supervisor's hot store, which the server must share (supervisor.ts,
 * httpOnMainThread, says why).
 */
export function startHttpServer(data: ThreadData, port: MessagePort, onMainThread: boolean, mainHot?: HotStore): void {
  const send = (m: ToSupervisor) => port.postMessage(m);

  setLogLevel(data.config.log.level);
  tolerateHotStoreCommitFailures();
  const uws = loadNativeUws();
  const metrics = createThreadMetrics();
  const memory = new ThreadMemoryTable(data.memory);
  if (!onMainThread) memory.claim('http');
  // The server's writer runs here when this is its only HTTP thread (writer/writer.ts says why).
  // After a failed sync it answers 503 to everything, and the supervisor shuts the server down
  // (exit 1) the usual way: this thread must end through stop(), with its sockets closed.
  const signals = new Signals(data.signals, signalLayout());
  const writer = data.writer ? startLocalWriter(data.writer) : null;
  const writes = writer ? writer.localClient() : WriterClient.overPort(data.writerPort!);
  const ctx = openThreadContext(data.config, data.dataDir, data.threadIndex, writes, data.redirectTable, metrics, signals, mainHot);
  const parts: CapabilityThread[] = CAPABILITIES.map((c) => c.http?.(ctx) ?? {});

  function startLocalWriter(shared: NonNullable<ThreadData['writer']>): Writer {
    const w = new Writer({
      dataDir: data.dataDir,
      setup: writerSetup(),
      stats: new Float64Array(shared.stats),
      onSyncFailure: () => send({ type: 'writer-failed' }),
      raise: (name) => signals.raise(name),
    });
    for (const p of shared.ports) w.listen(p);
    return w;
  }

  // GET /metrics is answered from the supervisor, which sums every thread's registry.
  let metricsRequestId = 0;
  const pendingMetrics = new Map<number, (text: string) => void>();
  function fetchAggregatedMetrics(): Promise<string> {
    const id = ++metricsRequestId;
    return new Promise((resolve) => {
      pendingMetrics.set(id, resolve);
      send({ type: 'metrics-request', id });
    });
  }

  const principals = new PrincipalCache((hash) => ctx.accounts.principalForKeyHash(hash), revocationVersion(ctx.hot));
  const router = new Router({
    authenticate: (key) => principals.get(hashApiKey(key)),
    observe: metrics.observe,
    threadIndex: data.threadIndex,
  });
  router.add(...systemRoutes({ fetchAggregatedMetrics, ready: () => answersQuery(ctx.sqlite) && hotStoreOpen(ctx.hot) }));
  for (const part of parts) {
    if (part.routes) router.add(...part.routes);
    if (part.rawRoutes) router.addRaw(...part.rawRoutes);
  }
  const allRoutes = parts.flatMap((part) => [...(part.routes ?? []), ...(part.rawRoutes ?? [])]);
  for (const part of parts) part.routesReady?.(allRoutes);

  const app = uws.App();
  // CORS and the access log apply to every route, WebSocket upgrades included (http/app-wrap.ts).
  const wrapped = wrapApp(app, { cors: new CorsPolicy(data.config.server.cors_origins), accessLog: data.config.log.access, trustedProxies: ctx.trustedProxies, observe: metrics.observe });
  for (const part of parts) {
    for (const ws of part.webSockets ?? []) {
      wrapped.ws(ws.path, ws.behavior);
      router.addWebSocket(ws.path);
    }
  }
  // The reserved root paths are never short codes: those without a route of their own (`/api`,
  // `/app`...) answer as unknown endpoints, not as unknown links.
  router.reserve([...RESERVED_PATHS].filter((p) => p !== '').map((p) => '/' + p));
  // After the WebSockets: their upgrade must be offered a request before the router's GET of the
  // path, which answers a request that is not one.
  router.mount(wrapped);

  let listenSocket: us_listen_socket | null = null;
  const listening = (sock: us_listen_socket | false) => {
    if (!sock) {
      send({ type: 'listen-failed', message: `cannot listen on ${data.config.server.host}:${data.port}` });
      return;
    }
    listenSocket = sock;
    send({ type: 'ready', nodeId: ctx.nodeId });
  };
  // uWS sets SO_REUSEPORT on its listening sockets unless told not to, so that threads can share
  // a port; another process could then listen on it too and be handed part of the connections (a
  // second server started at the same moment, both past the supervisor's check that the port is
  // free). The server's only thread holds the port alone; threads sharing it cannot, and the
  // supervisor's lock on the address keeps a second perch server off it (claimPort).
  if (data.config.server.threads === 1) listenExclusive(app, data.config.server.host, data.port, listening);
  else app.listen(data.config.server.host, data.port, listening);

  let releaseWriter!: () => void;
  const writerReleased = new Promise<void>((resolve) => (releaseWriter = resolve));

  let stopping = false;
  async function stop(): Promise<void> {
    if (stopping) return;
    stopping = true;
    // Stop accepting first, then let in-flight requests finish, then close the remaining
    // (idle keep-alive) connections: a thread must not end with uWS handles still open.
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    listenSocket = null;
    router.closeConnectionsAfterAnswers();
    for (const part of parts) part.stopping?.();
    const deadline = Date.now() + data.config.server.shutdown_timeout_seconds * 1000 - 1000;
    while (inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // close() exists on the native app (it ends every socket) but is missing from the typings.
    (app as unknown as { close(): void }).close();
    if (writer) {
      // The supervisor's background jobs still write their last through this writer.
      send({ type: 'http-stopped' });
      await writerReleased;
      await writer.stop();
    }
    try {
      for (const part of parts) await part.close?.();
      await ctx.close();
    } catch (err) {
      log.error('closing stores failed', errorFields(err));
    }
    memory.release();
    send({ type: 'stopped' });
    port.close();
  }

  port.on('message', (m: ToThread) => {
    switch (m.type) {
      case 'stop':
        void stop();
        break;
      case 'stop-writer':
        releaseWriter();
        break;
      case 'collect-metrics':
        // Its heap figures are read by the supervisor once every thread answered.
        memory.report();
        send({ type: 'metrics-part', id: m.id, data: metrics.json() });
        break;
      case 'metrics-text': {
        const resolve = pendingMetrics.get(m.id);
        pendingMetrics.delete(m.id);
        resolve?.(m.text);
        break;
      }
    }
  });
}
