// `perch import`: links from another shortener's export (core/link-import.ts reads the file) into
// a user's links, on the command's own SQLite connection (docs/architecture.md: CLI commands write
// on their own connections). Each entry keeps its code as an alias, its target, creation time,
// expiry and visit totals; an entry that cannot be imported is reported with its reason and
// skipped. What a user imported is recorded by source and by the entry's identity there
// (link_imports), so running the same file again imports nothing twice.
//
// Two passes: the first checks every entry in file order (so a code used twice in the file goes to
// its first entry) and is all a dry run does; the second writes in transactions of
// IMPORT_BATCH entries, oldest first, so that the imported links list (newest first, by id) in
// the order they were created at their source. It checks each entry again inside its transaction:
// a server running meanwhile may have given a code away.
import type { Config } from '../config';
import { checkTargetUrl } from '../core/link-url';
import type { ImportEntry, ImportFormat } from '../core/link-import';
import { aliasProblem } from '../core/short-code';
import { DAY_MS } from '../core/clicks';
import type { CodePool } from './code-pool';
import type { LinkStore } from './store';

/** Entries written per transaction: short enough that a running server's writer hardly waits. */
export const IMPORT_BATCH = 500;

export interface ImportRun {
  format: ImportFormat;
  entries: readonly ImportEntry[];
  ownerId: string;
  config: Config;
  store: LinkStore;
  /** What writing takes: the code pool and an id minter. Null for a dry run, which writes nothing. */
  writer: ImportWriter | null;
  nowMs?: number;
  /** Called after each checked or written batch: entries done of the total, and the pass. */
  progress?(done: number, total: number, pass: 'check' | 'write'): void;
}

export interface ImportWriter {
  pool: CodePool;
  newId(): string;
}

export interface ImportReport {
  imported: number;
  /** Every entry not imported, in file order, with its reason. */
  skipped: Array<{ where: string; reason: string }>;
}

interface Accepted {
  entry: ImportEntry;
  /** Position in the file, to report late skips in file order. */
  index: number;
  url: string;
  domain: string;
}

export function importLinks(run: ImportRun): ImportReport {
  const nowMs = run.nowMs ?? Date.now();
  const freedBefore = nowMs - run.config.links.alias_reuse_days * DAY_MS;
  const rules = { publicOrigin: run.config.server.public_origin, blocklist: run.config.links.blocklist };
  const skipped: Array<{ index: number; where: string; reason: string }> = [];
  const accepted: Accepted[] = [];
  // Codes and identities taken by earlier entries of this file.
  const codes = new Map<string, string>();
  const keys = new Map<string, string>();
  const total = run.entries.length;

  run.entries.forEach((entry, index) => {
    // Every batch's worth of entries, whatever became of them (a file imported before is mostly
    // skipped): the caller renews its node lease here.
    if (index > 0 && index % IMPORT_BATCH === 0) run.progress?.(index, total, 'check');
    const skip = (reason: string) => skipped.push({ index, where: entry.where, reason });
    if (entry.skip) return skip(entry.skip);
    if (run.store.wasImported(run.ownerId, run.format, entry.key)) return skip('already imported');
    const target = checkTargetUrl(entry.url, rules);
    if (!target.ok) return skip(`url ${JSON.stringify(entry.url)} ${target.message}`);
    if (entry.code !== undefined) {
      const problem = aliasProblem(entry.code);
      if (problem) return skip(`code ${JSON.stringify(entry.code)}: ${problem}`);
      const first = codes.get(entry.code);
      if (first !== undefined) return skip(`code ${entry.code} is in use (by ${first} of this file)`);
      if (run.store.codeTaken(entry.code, freedBefore)) return skip(`code ${entry.code} is in use`);
    }
    const twin = keys.get(entry.key);
    if (twin !== undefined) return skip(`the same entry as ${twin}`);
    if (entry.code !== undefined) codes.set(entry.code, entry.where);
    keys.set(entry.key, entry.where);
    accepted.push({ entry, index, url: target.url, domain: target.domain });
  });
  run.progress?.(total, total, 'check');

  let imported = 0;
  const writer = run.writer;
  if (writer === null) {
    imported = accepted.length;
  } else {
    // Oldest first; entries without a creation time are created now, after the others.
    const ordered = accepted.slice().sort((a, b) => (a.entry.createdMs ?? nowMs) - (b.entry.createdMs ?? nowMs));
    for (let from = 0; from < ordered.length; from += IMPORT_BATCH) {
      const batch = ordered.slice(from, from + IMPORT_BATCH);
      const poolCodes = drawCodes(run, writer.pool, batch.filter((a) => a.entry.code === undefined).length);
      run.store.inTransaction(() => {
        for (const a of batch) {
          const e = a.entry;
          if (run.store.wasImported(run.ownerId, run.format, e.key)) {
            skipped.push({ index: a.index, where: e.where, reason: 'already imported' });
            continue;
          }
          if (e.code !== undefined && run.store.codeTaken(e.code, freedBefore)) {
            skipped.push({ index: a.index, where: e.where, reason: `code ${e.code} is in use` });
            continue;
          }
          const link = {
            code: e.code ?? poolCodes.pop()!,
            id: writer.newId(),
            ownerId: run.ownerId,
            url: a.url,
            domain: a.domain,
            createdMs: e.createdMs ?? nowMs,
            expiresMs: e.expiresMs,
            passwordHash: null,
            importedClicks: e.visits,
            importedBots: e.botVisits,
            origin: run.format,
          };
          if (e.code !== undefined) run.store.insertAlias(link);
          else run.store.insert(link);
          run.store.recordImport(run.ownerId, run.format, e.key, link.code, nowMs);
          imported++;
        }
      });
      run.progress?.(Math.min(from + IMPORT_BATCH, ordered.length), ordered.length, 'write');
    }
  }
  skipped.sort((a, b) => a.index - b.index);
  return { imported, skipped: skipped.map(({ where, reason }) => ({ where, reason })) };
}

/** `count` codes from the pool, topping it up first when it holds fewer. */
function drawCodes(run: ImportRun, pool: CodePool, count: number): string[] {
  if (count === 0) return [];
  const { store, config } = run;
  if (pool.size() < count) pool.refill(store, config.links.pool_target + count, config.links.code_length);
  const codes = pool.drawMany(count);
  if (codes.length < count) throw new Error('the code pool could not supply enough codes');
  return codes;
}
