// Configuration: config/default.json holds every default, `--config FILE` deep-merges a JSON file
// over it, and PERCH_<SECTION>_<KEY> environment variables override single leaf values. The result
// is validated by one strict zod schema, so an unknown key or a wrong type stops start-up with a
// single line that names the offending key.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { blocklistHost } from './core/link-url';
import { isHttpOrigin } from './core/public-origin';
import { parseProxyEntry } from './core/trusted-proxies';
import { MAX_UNPOSTED_TTL_SECONDS } from './media/upkeep';

const positive = z.number().positive();
const nonNegInt = z.number().int().nonnegative();
const bucket = z.strictObject({ capacity: z.number().int().positive(), refill_per_second: positive });
const failMode = z.enum(['open', 'closed']);
/** "" (derive it from the listening address) or an http(s) origin. */
const publicOrigin = z.string().refine((v) => v === '' || isHttpOrigin(v), {
  message: 'expected an http(s) origin such as https://short.example, or "" to derive it from the listening address',
});
const proxyEntry = z.string().refine((v) => parseProxyEntry(v) !== null, { message: 'expected an IP address or a CIDR range such as 10.0.0.0/8' });
/** A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123), at most 253 characters. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
/** Where to listen: an IP address (IPv6 without brackets) or a host name, checked before anything starts. */
const listenHost = z.string().refine((v) => isIP(v) !== 0 || (HOST_NAME.test(v.replace(/\.$/, '')) && !/^[\d.]+$/.test(v)), {
  message: 'expected an IP address such as 127.0.0.1 or ::, or a host name such as localhost',
});
const corsOrigin = z.string().refine((v) => v === '*' || isHttpOrigin(v), { message: 'expected "*" or an http(s) origin such as https://app.example' });
/** An entry that names no host would block nothing, silently: refused instead (core/link-url.ts). */
const blocklistEntry = z.string().refine((v) => blocklistHost(v) !== '', {
  message: 'names no host: expected a host name such as evil.example (or *.evil.example, or a URL such as https://evil.example/)',
});

export const configSchema = z.strictObject({
  /** The data directory (PERCH_DATA, --data); relative to the config file that sets it, else to the working directory. */
  data: z.string().min(1),
  server: z.strictObject({
    host: listenHost,
    port: z.number().int().min(0).max(65535),
    threads: z.number().int().min(1).max(64),
    public_origin: publicOrigin,
    trusted_proxies: z.array(proxyEntry),
    cors_origins: z.array(corsOrigin),
    shutdown_timeout_seconds: z.number().positive().max(60),
  }),
  log: z.strictObject({
    level: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
    format: z.enum(['auto', 'json', 'human']),
    access: z.boolean(),
  }),
  limits: z.strictObject({
    shorten: bucket.extend({ burst_per_second: z.number().int().positive(), daily_quota: z.number().int().positive() }),
    redirect: bucket,
    search: z.strictObject({ recent: bucket, relevance: bucket }),
    link_password: bucket,
    link_password_all_clients: bucket,
    on_store_error: z.strictObject({ shorten: failMode, search: failMode, redirect: failMode }),
  }),
  links: z
    .strictObject({
      code_length: z.number().int().min(4).max(32),
      cache_ttl_seconds: positive,
      blocklist: z.array(blocklistEntry),
      pool_target: z.number().int().min(1).max(1_000_000),
      pool_low_water: nonNegInt,
      pool_wait_ms: nonNegInt.max(30_000),
      alias_reuse_days: nonNegInt,
    })
    // A refill tops the pool up to the target once it holds fewer codes than the low-water mark:
    // with the mark above the target, even a full pool is below it, and every check would start
    // a refill that adds nothing.
    .refine((l) => l.pool_low_water <= l.pool_target, {
      path: ['pool_low_water'],
      error: (issue) => {
        const l = issue.input as { pool_target: number; pool_low_water: number };
        return `must not be greater than links.pool_target (${l.pool_target}), but is ${l.pool_low_water}`;
      },
    }),
  anomaly: z.strictObject({
    max_links: z.number().int().positive(),
    window_seconds: positive,
    max_same_domain: z.number().int().positive(),
    domain_window_seconds: positive,
    cooloff_seconds: positive,
  }),
  social: z.strictObject({ celebrity_followers: nonNegInt, timeline_cap: z.number().int().min(1).max(100000) }),
  notifications: z.strictObject({
    aggregation_window_seconds: nonNegInt,
    /** Bytes a WebSocket may have waiting to be sent before it is closed as too slow. */
    ws_backpressure_limit_bytes: z.number().int().min(1024).max(64 * 1024 * 1024),
  }),
  suggest: z.strictObject({ half_life_hours: positive }),
  push: z.strictObject({
    enabled: z.boolean(),
    // RFC 8292: the contact of the server's operator, a mailto: or https: URI.
    subject: z.string().regex(/^(mailto:\S+|https:\/\/\S+)$/, 'must be a mailto: or https: URI'),
    allow_insecure_endpoints: z.boolean(),
    /** The first retry's delay after a 429 or 5xx; each next one doubles it. */
    retry_base_ms: z.number().int().min(1).max(600_000),
  }),
  // At least the largest bulk request the indexer sends (core/write-budget.ts, maxBatch).
  search: z.strictObject({ queue_capacity: z.number().int().min(1000).max(1_000_000) }),
  web: z.strictObject({ enabled: z.boolean() }),
  media: z.strictObject({
    /** Bytes of uploaded media each user may keep; 0 for no limit (media/quota.ts). */
    user_quota_bytes: nonNegInt,
    /** How long a file uploaded and never posted is kept; 0 keeps it for ever (media/upkeep.ts). */
    unposted_ttl_seconds: nonNegInt.max(MAX_UNPOSTED_TTL_SECONDS),
  }),
});

export type Config = z.infer<typeof configSchema>;

// Thrown for every problem found here (config-error.ts).
export { ConfigError };

export const DEFAULT_CONFIG_PATH = join(__dirname, '..', '..', 'config', 'default.json');

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isPlainObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep-merges `over` onto `base`: objects merge key by key, everything else (arrays too) replaces. */
export function deepMerge(base: Json, over: Json): Json {
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Record<string, Json> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

function readJsonFile(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/** Every leaf path of the defaults, keyed by its environment variable name. */
function envNames(defaults: Json, prefix: string[] = [], out = new Map<string, string[]>()): Map<string, string[]> {
  if (isPlainObject(defaults)) {
    for (const [k, v] of Object.entries(defaults)) envNames(v, [...prefix, k], out);
  } else {
    out.set('PERCH_' + prefix.join('_').toUpperCase(), prefix);
  }
  return out;
}

function setPath(target: Record<string, Json>, path: string[], value: Json): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {};
    node = node[key] as Record<string, Json>;
  }
  node[path[path.length - 1]] = value;
}

/** Parses an environment value in the type of the default it overrides. */
function parseEnvValue(name: string, path: string[], raw: string, current: Json): Json {
  if (typeof current === 'string') return raw;
  try {
    return JSON.parse(raw) as Json;
  } catch {
    const expected = Array.isArray(current) ? 'JSON array' : typeof current;
    throw new ConfigError(`invalid configuration key ${path.join('.')} (from ${name}): expected a ${expected}, got ${JSON.stringify(raw)}`);
  }
}

function getPath(obj: Json, path: string[]): Json {
  let node: Json = obj;
  for (const key of path) node = isPlainObject(node) ? node[key] : null;
  return node;
}

/**
 * A config file's relative `data` is relative to the file, so that the file means the same data
 * directory whichever directory perch is started from.
 */
function withDataFrom(file: Json, path: string): Json {
  if (!isPlainObject(file) || typeof file.data !== 'string' || file.data === '' || isAbsolute(file.data)) return file;
  return { ...file, data: resolve(dirname(resolve(path)), file.data) };
}

export interface LoadOptions {
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Values from command-line flags, applied last. */
  overrides?: Record<string, Json>;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const defaults = readJsonFile(DEFAULT_CONFIG_PATH);
  let merged = defaults;
  if (opts.file) {
    const file = readJsonFile(opts.file);
    if (!isPlainObject(file)) throw new ConfigError(`config file ${opts.file} must hold a JSON object, like config/default.json`);
    merged = deepMerge(merged, withDataFrom(file, opts.file));
  }

  const env = opts.env ?? process.env;
  const names = envNames(defaults);
  const fromEnv: Record<string, Json> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('PERCH_') || raw === undefined) continue;
    const path = names.get(name);
    if (!path) throw new ConfigError(`unknown configuration variable ${name}`);
    setPath(fromEnv, path, parseEnvValue(name, path, raw, getPath(defaults, path)));
  }
  merged = deepMerge(merged, fromEnv);
  if (opts.overrides) {
    // What the file and the environment say is checked as well as the result: a wrong value in
    // the file is an error even where a flag happens to override it this time.
    validateConfig(merged);
    merged = deepMerge(merged, opts.overrides);
  }
  return validateConfig(merged);
}

export function validateConfig(value: unknown): Config {
  const result = configSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  let path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = [...issue.path.map(String), issue.keys[0]].join('.');
    throw new ConfigError(`unknown configuration key ${key}`);
  }
  if (!path) path = '(root)';
  throw new ConfigError(`invalid configuration key ${path}: ${issue.message}`);
}
