// The Node.js flags `perch serve` is meant to run with, and one environment variable (below). They
// cannot be set from inside: V8 sizes the main thread's heap, and glibc its allocator, before any
// JavaScript runs. So they are written where perch is started:
// the `bin/perch` shebang, `npm start`, the systemd unit (test/server/node-flags.test.ts checks
// that those agree with this list).
//
// --max-semi-space-size caps the young generation of the main thread, which serves HTTP when the
// server has one HTTP thread. V8 otherwise grows it under a high allocation rate to its default
// maximum and keeps it. 3 MiB is below the worker threads' cap (server/heap-limits.ts): a request's
// objects die young, so a smaller young generation still collects them there; at 2 MiB too many
// outlived their scavenges and filled the old generation instead (docs/memory.md).
//
// --heap-growing-percent=50: after a full collection V8 lets the old generation grow to 1.5 times
// what survived before the next one, rather than up to 4 times when collections look cheap. Under
// a redirect load what a request leaves behind is promoted by the small young generation and dies
// soon after; with the default factor the old generation piled up several times its live size
// between two collections, and that garbage made most of the peak resident set. The price is
// more frequent major collections, which are mostly concurrent (docs/memory.md).
//
// --v8-pool-size=1: one helper thread for V8's background work (concurrent marking, compiling)
// instead of one per core and more: on the two cores this is built for, the request path and the
// pool already keep both busy, and each idle helper thread keeps its stack and malloc arena.
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=3', '--heap-growing-percent=50', '--v8-pool-size=1'];

// MALLOC_ARENA_MAX=2: glibc's malloc gives each thread that allocates an arena of its own, up to
// eight per core, and an arena keeps what it once held. A busy server's threads (libuv's, the
// pools', V8's helper) each took one; two arenas shared between them lowered the peak resident set
// under a redirect load, at no cost to its rate (docs/memory.md).
// glibc reads it once, when the process starts, so it is set where the flags are.
export const SERVE_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The recommended environment settings this process did not start with, as NAME=value. */
export function missingServeEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(SERVE_ENVIRONMENT)
    .filter(([name, value]) => env[name] !== value)
    .map(([name, value]) => `${name}=${value}`);
}

/** The recommended flags missing from this process's command line. */
export function missingServeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVE_NODE_FLAGS.filter((f) => !execArgv.includes(f));
}
