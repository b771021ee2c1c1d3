// Pieces every CLI command that opens a data directory shares: config loading, the data directory,
// its stores and its users (option parsers and failure reporting: cli/usage.ts).
import { loadConfig, type Config } from '../config';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDataDir, secureDataDir } from '../store/data-dir';
import { sqlitePath } from '../store/sqlite';
import { lmdbPath, openHotStore, type HotStore } from '../store/lmdb';
import { leaseNodeId, type LeasedIdGenerator } from '../store/node-lease';
import type { AccountStore, User } from '../accounts/store';
import { MANIFEST_FILE } from '../backup/manifest';
import { UsageError } from './usage';

export interface CommonOptions {
  /** --data: wins over PERCH_DATA and the config's `data` (config.ts). */
  data?: string;
  config?: string;
}

/** The configuration of a command: defaults, --config, PERCH_ variables, then its flags (--data too). */
export function commandConfig(opts: CommonOptions, overrides?: NonNullable<Parameters<typeof loadConfig>[0]>['overrides']): Config {
  const flags = { ...overrides };
  if (opts.data !== undefined) flags.data = opts.data;
  return loadConfig({ file: opts.config, overrides: flags });
}

/** The data directory when nothing sets one (config/default.json): relative to the working directory. */
const DEFAULT_DATA_DIR = './data';

/** The data directory a command means, absolute: --data, PERCH_DATA, the config's `data`, ./data. */
export function dataDirPath(opts: CommonOptions): string {
  return resolve(opts.data ?? commandConfig(opts).data);
}

/**
 * Refuses a backup given as a data directory. A backup holds a perch.db, so it would pass for one;
 * but opening it changes it (SQLite switches the file to its write-ahead log, a server or a
 * command adds its stores), and a backup whose database no longer matches its manifest's checksum
 * cannot be restored.
 */
export function refuseBackupAsData(dir: string): void {
  if (existsSync(join(dir, MANIFEST_FILE))) {
    throw new UsageError(
      `${dir} is a perch backup (it holds ${MANIFEST_FILE}), not a data directory: opening it would change it and it could no longer be restored; ` +
        `restore it into a data directory first (perch restore ${dir} --data NEW_DIR)`,
    );
  }
}

/** Opens (creating if needed) the data directory for a command. */
export function dataDirOf(opts: CommonOptions): string {
  refuseBackupAsData(dataDirPath(opts));
  const dir = ensureDataDir(dataDirPath(opts));
  secureDataDir(dir);
  return dir;
}

/**
 * The data directory of a command that only looks at or changes what is there (status, keys
 * list, ...): a mistyped --data must not quietly make an empty store and report on it.
 */
export function existingDataDirOf(opts: CommonOptions): string {
  const setting = opts.data ?? commandConfig(opts).data;
  const dir = resolve(setting);
  refuseBackupAsData(dir);
  if (!existsSync(sqlitePath(dir))) {
    // Said when no setting chose the directory, only the working directory.
    const hint = opts.data === undefined && setting === DEFAULT_DATA_DIR ? '; set --data or PERCH_DATA' : '';
    throw new UsageError(`no perch data in ${dir} (perch migrate, keygen or serve creates it${hint})`);
  }
  return dataDirOf({ ...opts, data: dir });
}

/**
 * Names the data directory a command used, so that a command run from the wrong directory says
 * so: on stdout before human output, on stderr when stdout carries JSON.
 */
export function announceDataDir(dir: string, opts: { json?: boolean; created?: boolean } = {}): void {
  const line = `data directory ${dir}${opts.created ? ' (new)' : ''}\n`;
  (opts.json ? process.stderr : process.stdout).write(line);
}

/**
 * The hot store for a command: a damaged one is moved aside and replaced by an empty one (the
 * next server start rebuilds what it must), told in one line on stderr, so that stdout stays the
 * command's answer.
 */
export function commandHotStore(dataDir: string): HotStore {
  return openHotStore(dataDir, {
    repair: true,
    onRepaired: (r) =>
      process.stderr.write(`perch: the hot store (${lmdbPath(dataDir)}) was damaged (${r.reason}); moved it to ${r.movedTo} and started an empty one\n`),
  });
}

/**
 * A node lease for a command that mints ids. When none can be had the hot store is closed before
 * the error goes on: a process that ends with the environment open leaves a reader slot that can
 * fail the server's LMDB commits (docs/architecture.md, "A damaged hot store").
 */
export async function commandLease(hot: HotStore): Promise<LeasedIdGenerator> {
  try {
    return leaseNodeId(hot);
  } catch (err) {
    await hot.close();
    throw err;
  }
}

/** The user a command names: a handle, @handle or user id (a handle first, when both fit). */
export function userNamed(accounts: AccountStore, ref: string): User | undefined {
  return accounts.userByHandle(ref.replace(/^@/, '')) ?? accounts.userById(ref);
}

