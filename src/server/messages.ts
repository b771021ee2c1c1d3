// Messages between the supervisor, its HTTP threads and the writer thread.
import type { Config } from '../config';
import type { MessagePort } from 'node:worker_threads';
import type { MetricsJson } from '../http/metrics';

/** Memory the writer shares with the supervisor, wherever the writer runs. */
export interface WriterShared {
  /** Two float64s the writer keeps current: commits, writes committed. */
  stats: SharedArrayBuffer;
  /** The signals the writer raises once a change is durable (server/signals.ts). */
  signals: SharedArrayBuffer;
  /** Where each thread writes its V8 heap figures (server/thread-memory.ts); absent in tests. */
  memory?: SharedArrayBuffer;
}

export interface ThreadData {
  config: Config;
  dataDir: string;
  port: number;
  threadIndex: number;
  /** The per-IP redirect buckets, one table for every HTTP thread (ratelimit/ip-buckets.ts). */
  redirectTable: SharedArrayBuffer;
  /** The signals the writer raises (server/signals.ts), which readers watch. */
  signals: SharedArrayBuffer;
  /** Where each thread writes its V8 heap figures (server/thread-memory.ts). */
  memory: SharedArrayBuffer;
  /** This thread's channel to the writer thread (transferred), when the writer has a thread. */
  writerPort?: MessagePort;
  /** Otherwise the writer runs in this thread (the server's only one), with these channels. */
  writer?: WriterShared & { ports: MessagePort[] };
}

export interface WriterData extends WriterShared {
  dataDir: string;
  logLevel: Config['log']['level'];
  /** One channel per HTTP thread, then the supervisor's (transferred). */
  ports: MessagePort[];
}

export type ToWriter = { type: 'stop' };
export type FromWriter = { type: 'ready' } | { type: 'stopped' };

export type ToSupervisor =
  | { type: 'ready'; nodeId: number }
  | { type: 'listen-failed'; message: string }
  | { type: 'metrics-request'; id: number }
  | { type: 'metrics-part'; id: number; data: MetricsJson }
  /** No more requests: sent by a thread that runs the writer, which waits for 'stop-writer'. */
  | { type: 'http-stopped' }
  /** The writer in this thread could not sync the log: the server must stop (exit 1). */
  | { type: 'writer-failed' }
  | { type: 'stopped' };

export type ToThread =
  | { type: 'stop' }
  /** To a thread that runs the writer, once the background jobs have written their last. */
  | { type: 'stop-writer' }
  | { type: 'collect-metrics'; id: number }
  | { type: 'metrics-text'; id: number; text: string };
