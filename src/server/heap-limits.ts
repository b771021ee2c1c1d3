// V8 heap limits of the threads the supervisor starts (HTTP threads, the writer, pool threads); the
// main thread gets the same young generation from its command line (server/node-flags.ts).
//
// The young generation is where a busy thread's resident memory goes: V8 grows each thread's
// semi-spaces up to their maximum under a high allocation rate and keeps them, so every busy
// thread held the default maximum for good. A smaller young generation means more frequent but
// shorter scavenges of the same short-lived garbage; the old generation, which holds what the
// thread really keeps (caches, prepared statements), is left to V8's default limit, since a
// tight cap there would turn a large export or an index rebuild into a crash (docs/memory.md).
import type { ResourceLimits } from 'node:worker_threads';

export const WORKER_YOUNG_GENERATION_MB = 16;

export const WORKER_RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
