// Entry point of an HTTP thread of its own (a server with more than one).
import { parentPort, workerData } from 'node:worker_threads';
import { startHttpServer } from './http-server';
import type { ThreadData } from './messages';

startHttpServer(workerData as ThreadData, parentPort!, false);
