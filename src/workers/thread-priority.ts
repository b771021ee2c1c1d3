// The background pool's thread runs at a lower CPU priority than the threads that answer requests
// (server/background.ts). On a machine with few cores, a pool thread that is indexing or draining
// holds a core that the HTTP thread (or its load) wants back at every wake-up; at a raised nice
// value the kernel's scheduler lets the woken HTTP thread run first and gives the background
// thread what the request path leaves. The work is not dropped: it waits for idle CPU, and with
// the cores free it runs as fast as before.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** How much a background thread's nice value is raised: a tenth of a normal thread's CPU share. */
export const BACKGROUND_NICE_INCREMENT = 10;

/** The highest nice value Linux allows (the lowest priority). */
const MAX_NICE = 19;

/**
 * The id the kernel gives the calling thread, or undefined where /proc does not tell it (not
 * Linux). Node.js exposes no thread id, and on Linux a thread's priority is its own, set by id.
 */
export function currentThreadId(): number | undefined {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Raises the calling thread's nice value by `increment` (not past 19); answers the new value, or
 * undefined where a thread's priority cannot be set alone. Raising needs no privilege.
 */
export function lowerThreadPriority(increment = BACKGROUND_NICE_INCREMENT): number | undefined {
  const tid = currentThreadId();
  // Elsewhere a pid would name the whole process, the HTTP thread included: leave it.
  if (tid === undefined || process.platform !== 'linux') return undefined;
  try {
    const nice = Math.min(MAX_NICE, getPriority(tid) + increment);
    setPriority(tid, nice);
    return nice;
  } catch {
    return undefined;
  }
}
