// The Node.js flags `perch serve` is meant to run with. They cannot be set from inside: V8 sizes
// the main thread's heap before any JavaScript runs. So they are written where perch is started:
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

/** The recommended flags missing from this process's command line. */
export function missingServeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVE_NODE_FLAGS.filter((f) => !execArgv.includes(f));
}
