// GET /ws: the real-time channel of notifications, one per HTTP thread. The upgrade is
// authenticated like every endpoint (Authorization: Bearer, X-Api-Key) or by `?access_token=`
// (browsers cannot set headers on a WebSocket); a bad or missing key is refused with 401 before the
// upgrade. The thread keeps its sockets by user and sends each notification the delivery consumer
// publishes (delivery.ts) to every socket of its recipient held here; the other threads do the same
// for theirs. uWS sends pings on idle sockets and closes those that stop answering; a socket that
// cannot keep up (more than `ws_backpressure_limit_bytes` waiting to be sent) is closed and logged,
// so that a slow reader never grows the server's memory without bound.
import type { HttpRequest, HttpResponse, WebSocket, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js';
import type { ThreadContext } from '../capability';
import { revocationVersion } from '../accounts/key-cache';
import { hashApiKey } from '../core/api-key';
import { unauthorized } from '../http/errors';
import { socketKey, writeReply } from '../http/router';
import { log } from '../log';
import { ThreadPresence } from './presence';
import { DELIVERY_TOPIC, type DeliveryMessage } from './topics';

interface SocketData {
  userId: string;
  keyHash: string;
}

type Socket = WebSocket<SocketData>;

/** Seconds of silence before uWS pings a socket, and closes it if the ping goes unanswered. */
const IDLE_TIMEOUT_SECONDS = 60;
/** Clients have nothing to send but control frames; anything longer is refused by uWS. */
const MAX_PAYLOAD_BYTES = 4096;
/** How often open sockets' keys are checked against revocations. */
const KEY_CHECK_MS = 5000;
/**
 * Keys looked up per check, in turn, for keys revoked other than by the CLI (which every thread
 * hears of at once, and then checks all): a few milliseconds of the thread's time each time, so
 * that 10,000 sockets are all checked within a minute without a long pause.
 */
const KEYS_PER_CHECK = 1000;
/** The close code of a socket closed because its key is no longer valid (policy violation). */
const CLOSE_POLICY = 1008;
/** The close code of the sockets a stopping server closes (RFC 6455: the endpoint is going away). */
const CLOSE_GOING_AWAY = 1001;

export class NotificationSockets {
  private readonly byUser = new Map<string, Set<Socket>>();
  /** Open sockets by the hash of the key they were opened with. */
  private readonly byKey = new Map<string, Set<Socket>>();
  /** Keys still to check in the current round (checkKeys). */
  private keysToCheck: string[] = [];
  private readonly presence: ThreadPresence;
  private readonly limit: number;
  private readonly openGauge: { set(value: number): void };
  private readonly slowClosed: { inc(): void };
  private readonly sent: { inc(): void };
  private readonly unsubscribe: () => void;
  private readonly keyTimer: NodeJS.Timeout;
  private readonly revocations: () => number;
  private seenRevocations = -1;
  private count = 0;

  constructor(private readonly ctx: ThreadContext) {
    this.presence = new ThreadPresence(ctx.hot, ctx.threadIndex);
    this.limit = ctx.config.notifications.ws_backpressure_limit_bytes;
    this.openGauge = ctx.metrics.gauge('perch_ws_open_sockets', 'WebSockets open on /ws.');
    this.slowClosed = ctx.metrics.counter('perch_ws_slow_closed_total', 'WebSockets closed because their reader fell behind (backpressure over the limit).');
    this.sent = ctx.metrics.counter('perch_ws_messages_sent_total', 'Notification messages sent on WebSockets.');
    this.unsubscribe = ctx.pubsub.subscribe(DELIVERY_TOPIC, (m) => this.deliver(m));
    this.revocations = revocationVersion(ctx.hot);
    this.seenRevocations = this.revocations();
    this.keyTimer = setInterval(() => this.checkKeys(), KEY_CHECK_MS);
    this.keyTimer.unref();
  }

  behavior(): WebSocketBehavior<SocketData> {
    return {
      idleTimeout: IDLE_TIMEOUT_SECONDS,
      sendPingsAutomatically: true,
      maxPayloadLength: MAX_PAYLOAD_BYTES,
      // Above the limit checked after each send (sendTo), so that it is this code that closes a
      // slow socket, and says so in the log.
      maxBackpressure: this.limit + 64 * 1024,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.opened(ws),
      close: (ws) => this.closed(ws),
    };
  }

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const started = performance.now();
    const key = socketKey(req);
    const keyHash = key ? hashApiKey(key) : '';
    const principal = key ? this.ctx.accounts.principalForKeyHash(keyHash) : undefined;
    if (!principal) {
      const e = unauthorized(key ? 'The API key is unknown or revoked.' : 'A valid API key is required.');
      writeReply(res, { status: e.status, json: e.body(), headers: e.headers }, false, true);
      this.ctx.metrics.observe('/ws', 'GET', e.status, (performance.now() - started) / 1000);
      return;
    }
    const data: SocketData = { userId: principal.userId, keyHash };
    res.upgrade(data, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    this.ctx.metrics.observe('/ws', 'GET', 101, (performance.now() - started) / 1000);
  }

  private opened(ws: Socket): void {
    const { userId, keyHash } = ws.getUserData();
    let set = this.byUser.get(userId);
    if (!set) this.byUser.set(userId, (set = new Set()));
    set.add(ws);
    let sameKey = this.byKey.get(keyHash);
    if (!sameKey) this.byKey.set(keyHash, (sameKey = new Set()));
    sameKey.add(ws);
    this.presence.opened(userId);
    this.openGauge.set(++this.count);
  }

  private closed(ws: Socket): void {
    const { userId, keyHash } = ws.getUserData();
    const set = this.byUser.get(userId);
    if (!set || !set.delete(ws)) return;
    if (set.size === 0) this.byUser.delete(userId);
    const sameKey = this.byKey.get(keyHash);
    if (sameKey && sameKey.delete(ws) && sameKey.size === 0) this.byKey.delete(keyHash);
    this.presence.closed(userId);
    this.openGauge.set(--this.count);
  }

  /** Sends each delivery to the sockets of its recipient that this thread holds. */
  deliver(m: DeliveryMessage): void {
    let slow: Socket[] | null = null;
    for (const [recipientId, text] of m.items) {
      const set = this.byUser.get(recipientId);
      if (!set) continue;
      for (const ws of set) if (!this.sendTo(ws, text)) (slow ??= []).push(ws);
    }
    if (slow) for (const ws of slow) this.closeSlow(ws);
  }

  /** False when the socket has fallen too far behind (it is closed after the loop). */
  private sendTo(ws: Socket, text: string): boolean {
    let status = 1;
    ws.cork(() => {
      status = ws.send(text, false);
    });
    // 2: dropped (over maxBackpressure); otherwise what waits may still be over the limit.
    if (status === 2 || ws.getBufferedAmount() > this.limit) return false;
    this.sent.inc();
    return true;
  }

  private closeSlow(ws: Socket): void {
    const set = this.byUser.get(ws.getUserData().userId);
    if (!set || !set.has(ws)) return;
    log.warn('closed a WebSocket whose reader fell behind', {
      user_id: ws.getUserData().userId,
      buffered_bytes: ws.getBufferedAmount(),
      limit_bytes: this.limit,
    });
    this.slowClosed.inc();
    // Closed at once, not with a close frame that would wait behind everything already queued.
    ws.close();
  }

  /**
   * Closes the sockets whose key was revoked since they opened: every key at once after a
   * revocation through the CLI, and otherwise the next KEYS_PER_CHECK keys in turn.
   */
  private checkKeys(): void {
    const version = this.revocations();
    let keys: string[];
    if (version !== this.seenRevocations) {
      this.seenRevocations = version;
      keys = [...this.byKey.keys()];
      this.keysToCheck = [];
    } else {
      if (this.keysToCheck.length === 0) this.keysToCheck = [...this.byKey.keys()];
      keys = this.keysToCheck.splice(0, KEYS_PER_CHECK);
    }
    for (const keyHash of keys) {
      const sockets = this.byKey.get(keyHash);
      if (!sockets || this.ctx.accounts.principalForKeyHash(keyHash)) continue;
      for (const ws of [...sockets]) ws.end(CLOSE_POLICY, 'key revoked');
    }
  }

  /** Open sockets on this thread. */
  get open(): number {
    return this.count;
  }

  /**
   * Closes every socket with a close frame saying the server is going away, as the thread stops:
   * without it the thread's last act would drop them, which clients see as a broken connection.
   */
  endAll(): void {
    for (const sockets of [...this.byUser.values()]) for (const ws of [...sockets]) ws.end(CLOSE_GOING_AWAY, 'server stopping');
  }

  close(): void {
    clearInterval(this.keyTimer);
    this.unsubscribe();
    this.presence.clear();
  }
}
