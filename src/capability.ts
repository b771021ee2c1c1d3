// What a capability (accounts, links, media, social, ...) is to the rest of perch: one module
// object that hands every part of the server what it contributes. The server's parts know only
// this shape; capabilities are listed once, in capabilities.ts. A capability's folder holds
// module.ts (this object), routes.ts, service.ts, store.ts (all of its SQL), schema.ts (zod),
// writes.ts (its write operations), tasks.ts (its pool tasks) and migrations.ts, as it needs them.
import type { WebSocketBehavior } from 'uWebSockets.js';
import type { Config } from './config';
import type { AccountStore } from './accounts/store';
import type { MeFields } from './accounts/me-fields';
import type { CursorCodec } from './core/cursor';
import type { RawRoute, Route } from './http/router';
import type { ThreadMetrics } from './http/metrics';
import type { OutboxConsumer, OutboxPosition } from './outbox/consumer';
import type { PubSub } from './pubsub/port';
import type { RateLimits } from './ratelimit/policies';
import type { BackgroundContext, BackgroundJob } from './server/background';
import type { Signals } from './server/signals';
import type { HotStore } from './store/lmdb';
import type { Migration } from './store/migration';
import type { Sqlite } from './store/sqlite';
import type { WriterClient } from './writer/client';
import type { WriteSet } from './writer/operations';
import type { WriterJob, WriterSignal } from './writer/writer';
import type { TaskTable } from './workers/context';

/**
 * How a capability declares the supervisor's figures in /metrics (server/figures.ts makes them
 * metrics). Each is read when /metrics is asked for, except `counter`, which the capability counts.
 */
export interface FigureSet {
  /** A value as it stands now. */
  gauge(name: string, help: string, read: () => number): void;
  /** Values as they stand now, one per value of `label`. */
  labelledGauge(name: string, help: string, label: string, read: () => Iterable<readonly [string, number]>): void;
  /** A running total kept elsewhere (a shared record), shown as a counter. */
  total(name: string, help: string, read: () => number): void;
  /** A counter by the values of `label`, each shown from 0; returns what counts one. */
  counter<V extends string>(name: string, help: string, label: string, values: readonly V[]): (value: V) => void;
}

/** What every capability gets in an HTTP thread. */
export interface ThreadContext {
  config: Config;
  dataDir: string;
  /** This thread's own SQLite connection, for reads (writes go through `writes`). */
  sqlite: Sqlite;
  hot: HotStore;
  newId(): string;
  /** The node id this thread leased: unique among the minters on the data dir. */
  nodeId: number;
  writes: WriterClient;
  cursors: CursorCodec;
  limits: RateLimits;
  accounts: AccountStore;
  /** Fields a capability adds to the caller's own GET /api/me answer (accounts/me-fields.ts). */
  me: MeFields;
  /** Messages between the threads of this process (pubsub/port.ts). */
  pubsub: PubSub;
  /** The counters the writer raises once a change is durable (server/signals.ts). */
  signals: Signals;
  metrics: ThreadMetrics;
  /** Client addresses whose X-Forwarded-For is believed (server.trusted_proxies). */
  trustedProxies: ReadonlySet<string>;
  /** What a client address is stored as, where something must be keyed on it (core/client-pseudonym.ts). */
  pseudonym(address: string): string;
  threadIndex: number;
}

/** A capability's part of one HTTP thread. */
export interface CapabilityThread {
  routes?: Route[];
  /** Hot paths served by raw uWS handlers (http/router.ts, RawRoute). */
  rawRoutes?: RawRoute[];
  /** WebSocket endpoints: uWS behaviours (upgrade, open, close...) by path. */
  webSockets?: Array<{ path: string; behavior: WebSocketBehavior<any> }>;
  /** Called once every capability of the thread has made its routes, with all of them (raw ones too). */
  routesReady?(routes: ReadonlyArray<{ method: string; path: string }>): void;
  /**
   * Called as the thread stops accepting connections, before it waits for its last requests and
   * closes what is still open: a capability with long-lived connections says goodbye on them.
   */
  stopping?(): void;
  /** Called as the thread stops, after its last request. */
  close?(): void | Promise<void>;
}

/** What `perch status` shows of a capability: flat values, or one level of groups. */
export type StatusSection = Record<string, string | number | boolean | null | Record<string, string | number | boolean | null>>;

export interface StatusContext {
  config: Config;
  /** For stores a capability keeps in files of its own (search.db). */
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
}

export interface Capability {
  name: string;
  /** Schema migrations; versions are global (store/migration.ts) and never reused. */
  migrations?: readonly Migration[];
  /** Named write operations the writer runs on its connection. */
  writes?: WriteSet;
  /** Operations the writer queues for itself (writer/writer.ts, WriterJob). */
  writerJobs?(db: Sqlite): WriterJob[];
  /** Changes the writer reports once durable (writer/writer.ts, WriterSignal). */
  writerSignals?(db: Sqlite): WriterSignal[];
  /** Names of the signals this capability raises (server/signals.ts). */
  signals?: readonly string[];
  /** Banks of counters every thread shares, by name and number of slots (server/signals.ts). */
  counterBanks?: Readonly<Record<string, number>>;
  /** Tasks the piscina pool runs, by name (workers/context.ts). */
  tasks?: TaskTable;
  /** Outbox consumers: pool tasks fed with ranges of events (outbox/consumer.ts). */
  consumers?: readonly OutboxConsumer[];
  /** Positions in the outbox kept by something else than a consumer (the writer's jobs). */
  outboxPositions?: readonly OutboxPosition[];
  /**
   * Supervisor work before the server reports listening (so the first requests do not compete
   * with it); a failure is logged and the jobs catch up.
   */
  prepare?(ctx: BackgroundContext): Promise<void>;
  /** The supervisor's periodic jobs. */
  jobs?(ctx: BackgroundContext): BackgroundJob[];
  /** Figures the supervisor adds to /metrics. */
  gauges?(figures: FigureSet, ctx: BackgroundContext): void;
  /** Opens the capability in an HTTP thread: its routes and what they use. */
  http?(ctx: ThreadContext): CapabilityThread;
  /**
   * Puts back, from SQLite, hot state that does not refill itself, after a damaged LMDB was
   * replaced by an empty one (store/lmdb.ts): caches, queues and timelines refill on their own.
   */
  rebuildHot?(sqlite: Sqlite, hot: HotStore): void;
  /** Lines of `perch status`. */
  status?(ctx: StatusContext): StatusSection;
  /**
   * Files under the data directory that rows of `db` refer to, as paths relative to it: what
   * `perch backup` copies beside a snapshot `db` of the database (backup/backup.ts). `perch
   * restore` starts with an empty hot store and calls rebuildHot.
   */
  backupFiles?(db: Sqlite): Iterable<string>;
  /**
   * Deletes from a database being restored the rows that refer to `files` (paths as backupFiles
   * gives them): files deleted while the backup ran, whose rows its snapshot still had (the
   * manifest's `files.deleted`).
   */
  forgetBackupFiles?(db: Sqlite, files: readonly string[]): void;
}
