// Links, click aggregates and account flags in SQLite: the source of truth. Everything in LMDB
// (redirect cache, code pool, click queue, flag mirror) is derived from or drained into here.
import type { Sqlite } from '../store/sqlite';
import type { ClickAggregate } from '../core/clicks';

/** What an edit of a link changes; a field left out stays as it is. */
export interface LinkEdit {
  target?: { url: string; domain: string };
  /** null: no expiry. */
  expiresMs?: number | null;
  /** null: no password. */
  passwordHash?: string | null;
}

export interface LinkRow {
  code: string;
  id: string;
  owner_id: string;
  url: string;
  domain: string;
  created_at: string;
  created_ms: number;
  updated_at: string;
  expires_at: string | null;
  expires_ms: number | null;
  retired_at: string | null;
  /** 1 when the link has a password, else 0 (the hash itself is read only to verify: passwordHash). */
  password_protected: number;
  /** Visits an import brought along (people, bots); 0 for links created here. */
  imported_clicks: number;
  imported_bots: number;
}

export interface NewLink {
  code: string;
  id: string;
  ownerId: string;
  url: string;
  domain: string;
  createdMs: number;
  expiresMs: number | null;
  passwordHash?: string | null;
}

/** A link brought in by `perch import`. */
export interface ImportedLink extends NewLink {
  importedClicks: number;
  importedBots: number;
  /** The import format: kutt, shlink, yourls or csv. */
  origin: string;
}

/** A link with its all-time click counts, as the export lists it. */
export interface LinkWithTotals extends LinkRow {
  clicks: number;
  bots: number;
}

export interface FlagRow {
  user_id: string;
  handle: string | null;
  reason: string;
  flagged_at: string;
  flagged_ms: number;
  until_ms: number;
  cleared_at: string | null;
  cleared_ms: number | null;
}

const COLUMNS =
  'code, CAST(id AS TEXT) AS id, owner_id, url, domain, created_at, created_ms, updated_at, expires_at, expires_ms, retired_at, ' +
  'password_hash IS NOT NULL AS password_protected, imported_clicks, imported_bots';

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** How far a click drain's batch has got, written with each of its parts (LinkStore.addClickPart). */
export interface ClickDrainProgress {
  /** The batch's queue keys as JSON, with its first part; null with the others. */
  keys: string | null;
  parts: number;
  /** Links per part, at most: a resumed batch splits the same way. */
  partLinks: number;
  /** Parts committed once this one is. */
  done: number;
}

export class LinkStore {
  private readonly s;

  constructor(private readonly db: Sqlite) {
    this.s = {
      insert: db.prepare(
        'INSERT INTO links (code, id, owner_id, url, domain, created_at, created_ms, updated_at, expires_at, expires_ms, password_hash, imported_clicks, imported_bots, origin) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      byCode: db.prepare(`SELECT ${COLUMNS} FROM links WHERE code = ?`),
      target: db.prepare('SELECT url, expires_ms, password_hash IS NOT NULL AS protected FROM links WHERE code = ?'),
      passwordHash: db.prepare('SELECT password_hash FROM links WHERE code = ?'),
      // Each field only when the edit gives it: two edits of different fields made at once both
      // stand, whichever commits first.
      update: db.prepare(
        'UPDATE links SET url = CASE WHEN @setUrl THEN @url ELSE url END, domain = CASE WHEN @setUrl THEN @domain ELSE domain END, ' +
          'expires_at = CASE WHEN @setExpiry THEN @expiresAt ELSE expires_at END, expires_ms = CASE WHEN @setExpiry THEN @expiresMs ELSE expires_ms END, ' +
          'updated_at = @now, retired_at = NULL, password_hash = CASE WHEN @setPassword THEN @hash ELSE password_hash END WHERE code = @code',
      ),
      remove: db.prepare('DELETE FROM links WHERE code = ?'),
      removeDaily: db.prepare('DELETE FROM link_clicks_daily WHERE code = ?'),
      removeMinute: db.prepare('DELETE FROM link_clicks_minute WHERE code = ?'),
      removeReferrers: db.prepare('DELETE FROM link_referrers WHERE code = ?'),
      removeBrowsers: db.prepare('DELETE FROM link_browsers WHERE code = ?'),
      removeOs: db.prepare('DELETE FROM link_os WHERE code = ?'),
      recordDeleted: db.prepare('INSERT OR REPLACE INTO deleted_codes (code, deleted_ms) VALUES (?, ?)'),
      deletedAt: db.prepare('SELECT deleted_ms FROM deleted_codes WHERE code = ?'),
      issued: db.prepare('SELECT 1 FROM issued_codes WHERE code = ?'),
      browsers: db.prepare('SELECT name, clicks FROM link_browsers WHERE code = ? ORDER BY clicks DESC, name ASC LIMIT ?'),
      os: db.prepare('SELECT name, clicks FROM link_os WHERE code = ? ORDER BY clicks DESC, name ASC LIMIT ?'),
      upsertBrowser: db.prepare(
        'INSERT INTO link_browsers (code, name, clicks) VALUES (?, ?, ?) ON CONFLICT (code, name) DO UPDATE SET clicks = clicks + excluded.clicks',
      ),
      upsertOs: db.prepare('INSERT INTO link_os (code, name, clicks) VALUES (?, ?, ?) ON CONFLICT (code, name) DO UPDATE SET clicks = clicks + excluded.clicks'),
      withTotals: db.prepare(
        `SELECT ${COLUMNS}, ` +
          '(SELECT COALESCE(SUM(d.clicks), 0) FROM link_clicks_daily d WHERE d.code = links.code) AS clicks, ' +
          '(SELECT COALESCE(SUM(d.bots), 0) FROM link_clicks_daily d WHERE d.code = links.code) AS bots ' +
          'FROM links WHERE owner_id = ? AND links.id < ? ORDER BY links.id DESC LIMIT ?',
      ),
      imported: db.prepare('SELECT 1 FROM link_imports WHERE owner_id = ? AND source = ? AND source_key = ?'),
      recordImport: db.prepare('INSERT INTO link_imports (owner_id, source, source_key, code, imported_at) VALUES (?, ?, ?, ?, ?)'),
      // links.id, not id: the select list names its text form `id`, and ORDER BY id would sort by
      // that, every matching row of the owner in a temporary b-tree for each page.
      page: db.prepare(`SELECT ${COLUMNS} FROM links WHERE owner_id = ? AND links.id < ? ORDER BY links.id DESC LIMIT ?`),
      daily: db.prepare('SELECT day, clicks, bots FROM link_clicks_daily WHERE code = ?'),
      lastMinutes: db.prepare('SELECT COALESCE(SUM(clicks), 0) AS n FROM link_clicks_minute WHERE code = ? AND minute > ?'),
      referrers: db.prepare('SELECT referrer, clicks FROM link_referrers WHERE code = ? ORDER BY clicks DESC, referrer ASC LIMIT ?'),
      upsertDaily: db.prepare(
        'INSERT INTO link_clicks_daily (code, day, clicks, bots) VALUES (?, ?, ?, ?) ON CONFLICT (code, day) DO UPDATE SET clicks = clicks + excluded.clicks, bots = bots + excluded.bots',
      ),
      upsertMinute: db.prepare(
        'INSERT INTO link_clicks_minute (code, minute, clicks) VALUES (?, ?, ?) ON CONFLICT (code, minute) DO UPDATE SET clicks = clicks + excluded.clicks',
      ),
      upsertReferrer: db.prepare(
        'INSERT INTO link_referrers (code, referrer, clicks) VALUES (?, ?, ?) ON CONFLICT (code, referrer) DO UPDATE SET clicks = clicks + excluded.clicks',
      ),
      linkExists: db.prepare('SELECT 1 FROM links WHERE code = ?'),
      addEvents: db.prepare('UPDATE link_click_totals SET events = events + ? WHERE id = 1'),
      events: db.prepare('SELECT events FROM link_click_totals WHERE id = 1'),
      startDrain: db.prepare('INSERT OR REPLACE INTO click_drain (id, keys, parts, part_links, done) VALUES (1, ?, ?, ?, ?)'),
      advanceDrain: db.prepare('UPDATE click_drain SET done = ? WHERE id = 1'),
      drainState: db.prepare('SELECT keys, parts, part_links AS partLinks, done FROM click_drain WHERE id = 1'),
      pruneMinutes: db.prepare('DELETE FROM link_clicks_minute WHERE minute <= ?'),
      dueForRetirement: db.prepare('SELECT code FROM links WHERE expires_ms IS NOT NULL AND expires_ms <= ? AND retired_at IS NULL LIMIT ?'),
      retire: db.prepare('UPDATE links SET retired_at = ? WHERE code = ? AND retired_at IS NULL AND expires_ms <= ?'),
      anyDueForRetirement: db.prepare('SELECT 1 FROM links WHERE expires_ms IS NOT NULL AND expires_ms <= ? AND retired_at IS NULL LIMIT 1').pluck(),
      anyMinuteUpTo: db.prepare('SELECT 1 FROM link_clicks_minute WHERE minute <= ? LIMIT 1').pluck(),
      countCreations: db.prepare('SELECT COUNT(*) FROM links WHERE created_ms > ? AND created_ms <= ? AND origin IS NULL').pluck(),
      recentCreations: db.prepare('SELECT owner_id AS userId, created_ms AS atMs, domain FROM links WHERE created_ms > ? AND origin IS NULL ORDER BY created_ms'),
      issueCode: db.prepare('INSERT OR IGNORE INTO issued_codes (code) VALUES (?)'),
      countLinks: db.prepare('SELECT COUNT(*) AS n FROM links'),
      flag: db.prepare(`SELECT f.user_id, u.handle, f.reason, f.flagged_at, f.flagged_ms, f.until_ms, f.cleared_at, f.cleared_ms
        FROM account_flags f LEFT JOIN users u ON u.id = f.user_id WHERE f.user_id = ?`),
      flags: db.prepare(`SELECT f.user_id, u.handle, f.reason, f.flagged_at, f.flagged_ms, f.until_ms, f.cleared_at, f.cleared_ms
        FROM account_flags f LEFT JOIN users u ON u.id = f.user_id ORDER BY f.flagged_ms DESC`),
      upsertFlag: db.prepare(`INSERT INTO account_flags (user_id, reason, flagged_at, flagged_ms, until_ms, cleared_at, cleared_ms)
        VALUES (?, ?, ?, ?, ?, NULL, NULL)
        ON CONFLICT (user_id) DO UPDATE SET reason = excluded.reason, flagged_at = excluded.flagged_at,
          flagged_ms = excluded.flagged_ms, until_ms = excluded.until_ms, cleared_at = NULL, cleared_ms = NULL`),
      clearFlag: db.prepare('UPDATE account_flags SET cleared_at = ?, cleared_ms = ? WHERE user_id = ?'),
    };
  }

  insert(l: NewLink | ImportedLink): LinkRow {
    const now = iso(l.createdMs)!;
    const hash = l.passwordHash ?? null;
    const imported = 'origin' in l ? l : undefined;
    this.s.insert.run(
      l.code, BigInt(l.id), l.ownerId, l.url, l.domain, now, l.createdMs, now, iso(l.expiresMs), l.expiresMs, hash,
      imported?.importedClicks ?? 0, imported?.importedBots ?? 0, imported?.origin ?? null,
    );
    return {
      code: l.code, id: l.id, owner_id: l.ownerId, url: l.url, domain: l.domain, created_at: now, created_ms: l.createdMs,
      updated_at: now, expires_at: iso(l.expiresMs), expires_ms: l.expiresMs, retired_at: null, password_protected: hash === null ? 0 : 1,
      imported_clicks: imported?.importedClicks ?? 0, imported_bots: imported?.importedBots ?? 0,
    };
  }

  /**
   * Whether a code is taken for an alias: by a link (active, expired or retired), by a link deleted
   * after `freedBeforeMs`, or by the pool (minted into issued_codes, so waiting in the pool, drawn
   * for a link being created, or discarded, and never freed by a deletion).
   */
  codeTaken(code: string, freedBeforeMs: number): boolean {
    if (this.s.linkExists.get(code) !== undefined) return true;
    const deleted = this.s.deletedAt.get(code) as { deleted_ms: number } | undefined;
    if (deleted !== undefined) return deleted.deleted_ms > freedBeforeMs;
    return this.s.issued.get(code) !== undefined;
  }

  /**
   * Inserts a link under a code of the user's choosing; the caller checked codeTaken in the same
   * transaction. The code is registered as issued, so the pool never mints it.
   */
  insertAlias(l: NewLink | ImportedLink): LinkRow {
    this.s.issueCode.run(l.code);
    return this.insert(l);
  }

  /** A protected link's password hash; undefined when the link has none or does not exist. */
  passwordHash(code: string): string | undefined {
    const row = this.s.passwordHash.get(code) as { password_hash: string | null } | undefined;
    return row?.password_hash ?? undefined;
  }

  byCode(code: string): LinkRow | undefined {
    return this.s.byCode.get(code) as LinkRow | undefined;
  }

  /** What a redirect needs: the target, expiry (ms, or null) and whether a password guards it (1/0). */
  target(code: string): { url: string; expires_ms: number | null; protected: number } | undefined {
    return this.s.target.get(code) as { url: string; expires_ms: number | null; protected: number } | undefined;
  }

  /**
   * Changes the fields `edit` gives and keeps the others as they are in the row now: `target`
   * (the URL and its domain), `expiresMs` (null: no expiry), `passwordHash` (null removes it).
   * False when no such link exists (any more).
   */
  update(code: string, edit: LinkEdit, nowMs: number): boolean {
    const expiresMs = edit.expiresMs ?? null;
    return (
      this.s.update.run({
        code,
        setUrl: edit.target ? 1 : 0,
        url: edit.target?.url ?? null,
        domain: edit.target?.domain ?? null,
        setExpiry: edit.expiresMs === undefined ? 0 : 1,
        expiresAt: iso(expiresMs),
        expiresMs,
        setPassword: edit.passwordHash === undefined ? 0 : 1,
        hash: edit.passwordHash ?? null,
        now: iso(nowMs),
      }).changes === 1
    );
  }

  /**
   * Deletes a link and its analytics; its code stays in issued_codes and is never minted again,
   * and is free for an alias links.alias_reuse_days after `nowMs` (deleted_codes).
   */
  remove(code: string, nowMs = Date.now()): boolean {
    return this.db.transaction(() => {
      const gone = this.s.remove.run(code).changes === 1;
      this.s.removeDaily.run(code);
      this.s.removeMinute.run(code);
      this.s.removeReferrers.run(code);
      this.s.removeBrowsers.run(code);
      this.s.removeOs.run(code);
      if (gone) this.s.recordDeleted.run(code, nowMs);
      return gone;
    })();
  }

  /** An owner's links with ids below `before`, newest first, with their all-time click counts. */
  pageWithTotals(ownerId: string, before: bigint, limit: number): LinkWithTotals[] {
    return this.s.withTotals.all(ownerId, before, limit) as LinkWithTotals[];
  }

  topBrowsers(code: string, limit: number): Array<{ name: string; clicks: number }> {
    return this.s.browsers.all(code, limit) as Array<{ name: string; clicks: number }>;
  }

  topOs(code: string, limit: number): Array<{ name: string; clicks: number }> {
    return this.s.os.all(code, limit) as Array<{ name: string; clicks: number }>;
  }

  /** Whether a user already imported the entry `key` of `source` (an import format). */
  wasImported(ownerId: string, source: string, key: string): boolean {
    return this.s.imported.get(ownerId, source, key) !== undefined;
  }

  recordImport(ownerId: string, source: string, key: string, code: string, nowMs: number): void {
    this.s.recordImport.run(ownerId, source, key, code, iso(nowMs));
  }

  /** Runs `fn` in one immediate transaction (the importer's batches). */
  inTransaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** An owner's links with ids below `before`, newest first. */
  page(ownerId: string, before: bigint, limit: number): LinkRow[] {
    return this.s.page.all(ownerId, before, limit) as LinkRow[];
  }

  dailyCounts(code: string): Array<{ day: string; clicks: number; bots: number }> {
    return this.s.daily.all(code) as Array<{ day: string; clicks: number; bots: number }>;
  }

  clicksSinceMinute(code: string, minuteExclusive: number): number {
    return (this.s.lastMinutes.get(code, minuteExclusive) as { n: number }).n;
  }

  topReferrers(code: string, limit: number): Array<{ referrer: string; clicks: number }> {
    return this.s.referrers.all(code, limit) as Array<{ referrer: string; clicks: number }>;
  }

  /**
   * Adds one part of a drained batch to the aggregates, and records in the same transaction how
   * far the batch has got (`progress`: the batch's queue keys with its first part, then the parts
   * done), so that a drain a crash interrupted resumes after the last part committed and no click
   * is counted twice. Clicks of links deleted meanwhile are dropped (their analytics were deleted
   * with them) but still counted as processed events.
   */
  addClickPart(agg: ClickAggregate, progress: ClickDrainProgress): void {
    this.db.transaction(() => {
      if (progress.keys !== null) this.s.startDrain.run(progress.keys, progress.parts, progress.partLinks, progress.done);
      else this.s.advanceDrain.run(progress.done);
      const exists = new Map<string, boolean>();
      const live = (code: string) => {
        let v = exists.get(code);
        if (v === undefined) exists.set(code, (v = this.s.linkExists.get(code) !== undefined));
        return v;
      };
      for (const d of agg.daily) if (live(d.code)) this.s.upsertDaily.run(d.code, d.day, d.clicks, d.bots);
      for (const m of agg.minutes) if (live(m.code)) this.s.upsertMinute.run(m.code, m.minute, m.clicks);
      for (const r of agg.referrers) if (live(r.code)) this.s.upsertReferrer.run(r.code, r.referrer, r.clicks);
      for (const b of agg.browsers) if (live(b.code)) this.s.upsertBrowser.run(b.code, b.name, b.clicks);
      for (const o of agg.os) if (live(o.code)) this.s.upsertOs.run(o.code, o.name, o.clicks);
      this.s.addEvents.run(agg.events);
    })();
  }

  /** The batch the last drain worked on: its queue keys (JSON), parts, their size, and parts committed. */
  clickDrain(): { keys: string; parts: number; partLinks: number; done: number } | undefined {
    return this.s.drainState.get() as { keys: string; parts: number; partLinks: number; done: number } | undefined;
  }

  /** Click events ever drained into the aggregates (bots included). */
  processedEvents(): number {
    return (this.s.events.get() as { events: number }).events;
  }

  pruneMinutes(minuteInclusive: number): number {
    return this.s.pruneMinutes.run(minuteInclusive).changes;
  }

  /** Marks up to `limit` links whose expiry has passed as retired; returns their codes. */
  retireExpired(nowMs: number, limit: number): string[] {
    return this.db.transaction(() => {
      const codes = (this.s.dueForRetirement.all(nowMs, limit) as Array<{ code: string }>).map((r) => r.code);
      const at = iso(nowMs);
      for (const c of codes) this.s.retire.run(at, c, nowMs);
      return codes;
    })();
  }

  /** Whether the expiry sweep has anything to do: a link to retire or minute buckets to prune. */
  sweepDue(nowMs: number, minuteInclusive: number): boolean {
    return this.s.anyDueForRetirement.get(nowMs) !== undefined || this.s.anyMinuteUpTo.get(minuteInclusive) !== undefined;
  }

  /** Links created (not imported) after `afterMs`, up to `upToMs`. */
  countCreations(afterMs: number, upToMs = Number.MAX_SAFE_INTEGER): number {
    return this.s.countCreations.get(afterMs, upToMs) as number;
  }

  recentCreations(sinceMs: number): Array<{ userId: string; atMs: number; domain: string }> {
    return this.s.recentCreations.all(sinceMs) as Array<{ userId: string; atMs: number; domain: string }>;
  }

  /** Records freshly generated codes; returns those that were never issued before. */
  issueCodes(candidates: readonly string[]): string[] {
    return this.db.transaction(() => candidates.filter((c) => this.s.issueCode.run(c).changes === 1)).immediate();
  }

  countLinks(): number {
    return (this.s.countLinks.get() as { n: number }).n;
  }

  flag(userId: string): FlagRow | undefined {
    return this.s.flag.get(userId) as FlagRow | undefined;
  }

  flags(): FlagRow[] {
    return this.s.flags.all() as FlagRow[];
  }

  raiseFlag(userId: string, reason: string, nowMs: number, untilMs: number): void {
    this.s.upsertFlag.run(userId, reason, iso(nowMs), nowMs, untilMs);
  }

  clearFlag(userId: string, nowMs: number): boolean {
    return this.s.clearFlag.run(iso(nowMs), nowMs, userId).changes === 1;
  }
}
