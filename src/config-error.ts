// In a module of its own, so that a command telling it apart (cli/usage.ts, exit 2) loads no schema.

/** A configuration problem, reported to the operator as one line. */
export class ConfigError extends Error {}
