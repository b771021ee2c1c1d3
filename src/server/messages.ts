// Messages between the supervisor and its HTTP threads.
import type { Config } from '../config';
import type { MetricsJson } from '../http/metrics';

export interface ThreadData {
  config: Config;
  dataDir: string;
  port: number;
  threadIndex: number;
}

export type ToSupervisor =
  | { type: 'ready'; nodeId: number }
  | { type: 'listen-failed'; message: string }
  | { type: 'metrics-request'; id: number }
  | { type: 'metrics-part'; id: number; data: MetricsJson }
  | { type: 'stopped' };

export type ToThread =
  | { type: 'stop' }
  | { type: 'collect-metrics'; id: number }
  | { type: 'metrics-text'; id: number; text: string };
