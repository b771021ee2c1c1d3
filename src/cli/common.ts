// Pieces every CLI command shares: option parsers, config loading and failure reporting.
import { InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureDataDir } from '../server/supervisor';
import { sqlitePath } from '../store/sqlite';
import { lmdbPath, openHotStore, type HotStore } from '../store/lmdb';
import type { AccountStore, User } from '../accounts/store';

export interface CommonOptions {
  data: string;
  config?: string;
}

export function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

export function commandConfig(opts: CommonOptions, overrides?: NonNullable<Parameters<typeof loadConfig>[0]>['overrides']): Config {
  return loadConfig({ file: opts.config, overrides });
}

/** Opens (creating if needed) the data directory for a command. */
export function dataDirOf(opts: CommonOptions): string {
  return ensureDataDir(opts.data);
}

/**
 * The data directory of a command that only looks at or changes what is there (status, keys
 * list, ...): a mistyped --data must not quietly make an empty store and report on it.
 */
export function existingDataDirOf(opts: CommonOptions): string {
  const dir = resolve(opts.data);
  if (!existsSync(sqlitePath(dir))) throw new UsageError(`no perch data in ${dir} (perch migrate, keygen or serve creates it)`);
  return ensureDataDir(dir);
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

/** The user a command names: a handle, @handle or user id (a handle first, when both fit). */
export function userNamed(accounts: AccountStore, ref: string): User | undefined {
  return accounts.userByHandle(ref.replace(/^@/, '')) ?? accounts.userById(ref);
}

/** A bad value noticed by a command itself (not by commander's parser): exit 2 like a bad flag. */
export class UsageError extends Error {}

/** Exit codes: 2 for a bad flag, value or configuration; 1 for anything that failed at run time. */
export function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`perch: ${message.split('\n')[0]}\n`);
  process.exit(err instanceof ConfigError || err instanceof UsageError ? 2 : 1);
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}
