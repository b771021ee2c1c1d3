// Every task the pool can run, by name. Capabilities add their handlers here.
import type { TaskContext } from './tasks';
import { fanoutTask } from '../social/fanout';
import { detectLinkAnomalies, drainClickQueue, refillCodePool, sweepExpiredLinks } from '../links/tasks';

export type TaskHandler<P = any, R = unknown> = (ctx: TaskContext, payload: P) => Promise<R> | R;

export const TASKS: Record<string, TaskHandler> = {
  /** Round trip through the pool; used by `perch status` checks and tests of the pool itself. */
  ping: () => 'pong',
  /** Home-timeline fan-out of a range of outbox events. */
  'social.fanout': fanoutTask,
  'links.refillPool': refillCodePool,
  'links.drainClicks': drainClickQueue,
  'links.detectAnomalies': detectLinkAnomalies,
  'links.sweepExpired': sweepExpiredLinks,
};
