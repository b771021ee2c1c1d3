// The short-link capability of one HTTP thread: creation (one or in bulk, with a pool code or an
// alias, with or without a password), details, edits, deletion, listing, QR images, the export,
// and unlocking a password link, independent of HTTP: methods take checked input and return domain
// objects, and routes.ts turns them into replies. The redirect itself lives in redirect.ts and only
// shares the cache and the click queue.
import type { Config } from '../config';
import type { AccountStore, Principal } from '../accounts/store';
import { dailySeries, DAY_MS, MINUTE_MS } from '../core/clicks';
import { clientNetwork } from '../core/client-network';
import { csvRow } from '../core/csv';
import { checkTargetUrl } from '../core/link-url';
import { hashPassword, passwordProblem, verifyPassword } from '../core/password';
import { aliasProblem } from '../core/short-code';
import { TOP } from '../core/snowflake';
import type { LimitRule } from '../core/token-bucket';
import { conflict, forbidden, HttpError, invalidRequest, notFound, unavailable, type ErrorDetail } from '../http/errors';
import { pageOf, type Page, type PageRequest } from '../http/paging';
import { rateLimitError, rateLimitHeaders } from '../ratelimit/headers';
import { LINK_PASSWORD_GUESSES, PASSWORD_GUESSES, linkPasswordGuessRules, passwordGuessRules, type RateLimits } from '../ratelimit/policies';
import { SharedLimiter } from '../ratelimit/shared';
import { errorFields, log } from '../log';
import type { PubSub } from '../pubsub/port';
import type { Sqlite } from '../store/sqlite';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { Writes } from '../writer/operations';
import { openFlagMirror } from './anomaly';
import { CacheInvalidation, RedirectCache } from './cache';
import { ClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { isoTimestampMs, type PatchBody, type ShortenBody } from './schema';
import { LinkStore, type LinkEdit, type LinkRow, type LinkWithTotals } from './store';
import { ALIAS_TAKEN, type LinkWrites } from './writes';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface LinkDeps {
  config: Config;
  sqlite: Sqlite;
  hot: HotStore;
  limits: RateLimits;
  accounts: AccountStore;
  newId: () => string;
  /** Leased node id of this thread: makes click-queue keys unique across threads. */
  nodeId: number;
  /** Links are created, edited and deleted by the writer (links/writes.ts). */
  writes: Writes<LinkWrites>;
  /** Reaches the other HTTP threads, whose redirect caches an edit must empty. */
  pubsub: PubSub;
  /** Counts a 429 in perch_rate_limit_rejections_total under the limit's name. */
  rejected?(limit: string): void;
  /** What a client address is stored as (the wrong-password limit is kept in LMDB). */
  pseudonym(address: string): string;
}

/** A link as creation answers it. */
export interface LinkSummary {
  short_code: string;
  short_url: string;
  url: string;
  created_at: string;
  expires_at: string | null;
  password_protected: boolean;
}

export interface LinkListItem extends LinkSummary {
  updated_at: string;
  status: 'active' | 'expired';
}

export interface NameCount {
  name: string;
  count: number;
}

export interface ClickStats {
  total: number;
  last_24h: number;
  daily: Array<{ date: string; count: number }>;
  referrers: Array<{ referrer: string; count: number }>;
  bots: number;
  /** Top 10 browser and OS families of people's clicks. */
  browsers: NameCount[];
  os: NameCount[];
  /** The part of `total` and `bots` that an import brought from another shortener. */
  imported: { total: number; bots: number };
}

export interface LinkDetails extends LinkListItem {
  clicks: ClickStats;
}

/** What the JSON export lists per link: the details without the daily series. */
export interface LinkExportItem extends LinkListItem {
  clicks: Omit<ClickStats, 'daily'>;
}

/** A created link, and the creator's rate-limit headers after the creation. */
export interface Created {
  link: LinkSummary;
  limitHeaders: Record<string, string>;
}

/** One entry of a bulk creation's answer: what its single creation would have answered. */
export interface BulkItem {
  index: number;
  status: number;
  link?: LinkSummary;
  error?: Record<string, unknown>;
}

/** A bulk entry as the route hands it over: its checked body, or the 400 its shape earned. */
export type BulkEntry = ShortenBody | HttpError;

export type QrFormat = 'svg' | 'png';
export type ExportFormat = 'csv' | 'json';

/** The export's CSV header (CONTRACT §2). */
export const EXPORT_CSV_COLUMNS = ['short_code', 'short_url', 'url', 'created_at', 'expires_at', 'password_protected', 'clicks_total', 'clicks_bots'];

/** Links read from SQLite per export chunk. */
const EXPORT_PAGE = 200;

/** What GET or POST /{code} finds for a code, before any password. */
export type LinkAccess =
  | { state: 'unknown' }
  | { state: 'expired' }
  | { state: 'open'; url: string }
  | { state: 'protected'; url: string; hash: string };

/** The outcome of a password sent to POST /{code}. */
export type Unlock =
  | { ok: true; url: string; limitHeaders: Record<string, string> }
  | { ok: false; limitHeaders: Record<string, string> };

interface CheckedFields {
  url?: string;
  domain?: string;
  expiresMs?: number | null;
  alias?: string;
  /** undefined: not given; null: remove (PATCH). */
  password?: string | null;
}

export class LinkService {
  readonly store: LinkStore;
  readonly pool: CodePool;
  readonly cache: RedirectCache;
  readonly invalidation: CacheInvalidation;
  readonly clicks: ClickQueue;
  readonly flags: LmdbDb<number, string>;
  readonly origin: string;
  private readonly guesses: SharedLimiter;
  private readonly guessRules: LimitRule[];
  private readonly linkGuessRules: LimitRule[];

  constructor(private readonly deps: LinkDeps) {
    const { config, sqlite, hot } = deps;
    this.store = new LinkStore(sqlite);
    this.pool = new CodePool(hot, config.links.code_length);
    this.cache = new RedirectCache(hot, this.store, config.links.cache_ttl_seconds * 1000);
    this.invalidation = new CacheInvalidation(this.cache, deps.pubsub);
    this.clicks = new ClickQueue(hot, deps.nodeId);
    this.flags = openFlagMirror(hot);
    this.origin = config.server.public_origin.replace(/\/+$/, '');
    // Wrong passwords, per client address and code and per code, in LMDB: one count whichever
    // thread or process answers, so more threads do not mean more guesses.
    this.guesses = new SharedLimiter(hot);
    this.guessRules = passwordGuessRules(config);
    this.linkGuessRules = linkPasswordGuessRules(config);
  }

  close(): void {
    // Clicks of the current event-loop turn; the store's close waits for the write.
    this.clicks.flush();
  }

  shortUrl(code: string): string {
    return this.origin + '/' + code;
  }

  /** Checks the fields of a creation or an edit; collects every problem into one 400. */
  private checkFields(
    body: { url?: string; expires_at?: string | null; alias?: string; password?: string | null },
    nowMs: number,
  ): CheckedFields {
    const details: ErrorDetail[] = [];
    const out: CheckedFields = {};
    if (body.url !== undefined) {
      const c = checkTargetUrl(body.url, { publicOrigin: this.deps.config.server.public_origin, blocklist: this.deps.config.links.blocklist });
      if (c.ok) {
        out.url = c.url;
        out.domain = c.domain;
      } else {
        details.push({ path: 'url', message: c.message });
      }
    }
    const expiresAt = body.expires_at;
    if (expiresAt === null) out.expiresMs = null;
    else if (expiresAt !== undefined) {
      const ms = isoTimestampMs(expiresAt);
      if (Number.isNaN(ms)) details.push({ path: 'expires_at', message: 'must be an ISO 8601 timestamp with a time zone' });
      else if (ms <= nowMs) details.push({ path: 'expires_at', message: 'must be in the future' });
      else out.expiresMs = ms;
    }
    if (body.alias !== undefined) {
      const problem = aliasProblem(body.alias);
      if (problem) details.push({ path: 'alias', message: problem });
      else out.alias = body.alias;
    }
    if (body.password === null) out.password = null;
    else if (body.password !== undefined) {
      const problem = passwordProblem(body.password);
      if (problem) details.push({ path: 'password', message: problem });
      else out.password = body.password;
    }
    if (details.length > 0) throw invalidRequest(details);
    return out;
  }

  /** Deleted links free their code for an alias once this instant is past their deletion. */
  private freedBefore(nowMs: number): number {
    return nowMs - this.deps.config.links.alias_reuse_days * DAY_MS;
  }

  private summary(row: LinkRow): LinkSummary {
    return {
      short_code: row.code,
      short_url: this.shortUrl(row.code),
      url: row.url,
      created_at: row.created_at,
      expires_at: row.expires_at,
      password_protected: row.password_protected === 1,
    };
  }

  private listItem(row: LinkRow, nowMs: number): LinkListItem {
    return {
      ...this.summary(row),
      updated_at: row.updated_at,
      status: row.expires_ms !== null && row.expires_ms <= nowMs ? 'expired' : 'active',
    };
  }

  /**
   * Throws the 429 of an account the anomaly detector flagged: such an account is throttled
   * before its request is even read, and before its numeric limits are consulted.
   */
  refuseIfFlagged(principal: Principal, nowMs = Date.now()): void {
    const flaggedUntil = this.flags.get(principal.userId);
    if (flaggedUntil !== undefined && flaggedUntil > nowMs) {
      this.deps.limits.throttled(principal.keyId, (flaggedUntil - nowMs) / 1000, 'This account is creating links unusually fast and is throttled for a while.', nowMs);
    }
  }

  /**
   * Creates a link. Order: field checks (400) and a taken alias (409) consume nothing; then the
   * creation limits (429); then the code (503 when the pool stays empty) and the commit.
   */
  async shorten(principal: Principal, body: ShortenBody): Promise<Created> {
    const nowMs = Date.now();
    const fields = this.checkCreation(body, nowMs);
    const limitHeaders = this.deps.limits.enforceShorten(principal.keyId, nowMs);
    const link = await this.create(principal, fields, nowMs);
    return { link, limitHeaders };
  }

  /** The checks of a creation that consume nothing: fields (400), then the alias's availability (409). */
  private checkCreation(body: ShortenBody, nowMs: number, claimed?: ReadonlySet<string>): CheckedFields {
    const fields = this.checkFields(body, nowMs);
    if (fields.alias !== undefined && (claimed?.has(fields.alias) || this.store.codeTaken(fields.alias, this.freedBefore(nowMs)))) {
      throw conflict(ALIAS_TAKEN);
    }
    return fields;
  }

  /**
   * Creates a checked link whose creation the limits already allowed; a failure gives the
   * creation back to the key's limits (nothing was created), so the error's limiter headers, read
   * after this, show it back.
   */
  private async create(principal: Principal, fields: CheckedFields, nowMs: number): Promise<LinkSummary> {
    try {
      const passwordHash = typeof fields.password === 'string' ? await hashPassword(fields.password) : null;
      const link = {
        id: this.deps.newId(),
        ownerId: principal.userId,
        url: fields.url!,
        domain: fields.domain!,
        createdMs: Date.now(),
        expiresMs: fields.expiresMs ?? null,
        passwordHash,
      };
      if (fields.alias !== undefined) {
        return this.summary(await this.deps.writes.run('insertAlias', { ...link, code: fields.alias, freedBeforeMs: this.freedBefore(nowMs) }));
      }
      const code = await this.drawCode();
      if (code === undefined) throw unavailable(1, 'No short codes are available right now; try again shortly.');
      return this.summary(await this.deps.writes.run('insertLink', { ...link, code }));
    } catch (err) {
      this.deps.limits.refundShorten(principal.keyId);
      throw err;
    }
  }

  /**
   * Creates up to 100 links, each answered as its single creation would have been, in order. Each
   * entry is checked (400, 409) and then takes one creation from the key's limits; an entry the
   * limits refuse is a 429 and consumes nothing. The creations that passed run together (one
   * group commit). The headers are the limits as they stand after the batch.
   */
  async bulk(principal: Principal, entries: readonly BulkEntry[]): Promise<{ items: BulkItem[]; limitHeaders: Record<string, string> }> {
    const nowMs = Date.now();
    const items: BulkItem[] = [];
    const pending: Array<Promise<void>> = [];
    // Aliases taken by earlier entries of this batch: a later entry asking for one is a 409, as
    // its single creation after the earlier one would have been.
    const claimed = new Set<string>();
    // An account the anomaly detector throttles: each entry gets the 429 its creation alone would
    // get (that comes before any check of its body), in a 200 like any other batch.
    let throttled: HttpError | null = null;
    try {
      this.refuseIfFlagged(principal, nowMs);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      throttled = err;
    }
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index];
      const item: BulkItem = { index, status: 0 };
      items.push(item);
      try {
        if (throttled) throw throttled;
        if (entry instanceof HttpError) throw entry;
        const fields = this.checkCreation(entry, nowMs, claimed);
        this.deps.limits.enforceShorten(principal.keyId, nowMs);
        if (fields.alias !== undefined) claimed.add(fields.alias);
        pending.push(
          this.create(principal, fields, nowMs).then(
            (link) => {
              item.status = 201;
              item.link = link;
            },
            (err) => failItem(item, err),
          ),
        );
      } catch (err) {
        failItem(item, err);
      }
    }
    await Promise.all(pending);
    return { items, limitHeaders: this.deps.limits.peekShorten(principal.keyId) };
  }

  /** A code from the pool, waiting up to links.pool_wait_ms for a refill when it is empty. */
  private async drawCode(): Promise<string | undefined> {
    const deadline = Date.now() + this.deps.config.links.pool_wait_ms;
    for (;;) {
      const code = this.pool.draw();
      if (code !== undefined || Date.now() >= deadline) return code;
      await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
    }
  }

  /** The link when the principal may manage it; 404 otherwise (never revealing that it exists). */
  private owned(principal: Principal, code: string): LinkRow {
    const row = this.store.byCode(code);
    if (!row || (row.owner_id !== principal.userId && !principal.admin)) throw notFound('No such link.');
    return row;
  }

  /** 404 unless the principal may manage the link (it exists, and is theirs or they are admin). */
  checkManageable(principal: Principal, code: string): void {
    this.owned(principal, code);
  }

  details(principal: Principal, code: string): LinkDetails {
    return this.detailsOf(this.owned(principal, code));
  }

  private detailsOf(row: LinkRow, nowMs = Date.now()): LinkDetails {
    const byDay = new Map<string, number>();
    let total = 0;
    let bots = 0;
    for (const d of this.store.dailyCounts(row.code)) {
      byDay.set(d.day, d.clicks);
      total += d.clicks;
      bots += d.bots;
    }
    const s = this.clickStats(row, total, bots, nowMs);
    const clicks: ClickStats = {
      total: s.total, last_24h: s.last_24h, daily: dailySeries(byDay, nowMs, 30), referrers: s.referrers, bots: s.bots,
      browsers: s.browsers, os: s.os, imported: s.imported,
    };
    return { ...this.listItem(row, nowMs), clicks };
  }

  /** Everything of the click statistics but the daily series, from the all-time counts given. */
  private clickStats(row: LinkRow, clicks: number, bots: number, nowMs: number): Omit<ClickStats, 'daily'> {
    const minuteNow = Math.floor(nowMs / MINUTE_MS);
    return {
      total: clicks + row.imported_clicks,
      last_24h: this.store.clicksSinceMinute(row.code, minuteNow - 24 * 60),
      referrers: this.store.topReferrers(row.code, 10).map((r) => ({ referrer: r.referrer, count: r.clicks })),
      bots: bots + row.imported_bots,
      browsers: this.store.topBrowsers(row.code, 10).map((r) => ({ name: r.name, count: r.clicks })),
      os: this.store.topOs(row.code, 10).map((r) => ({ name: r.name, count: r.clicks })),
      imported: { total: row.imported_clicks, bots: row.imported_bots },
    };
  }

  /** Edits a link (same rules as creation); redirects see the change at once. */
  async patch(principal: Principal, code: string, body: PatchBody): Promise<LinkDetails> {
    const nowMs = Date.now();
    const row = this.owned(principal, code);
    // Every field is optional (CONTRACT.md): an empty edit changes nothing and answers the link.
    if (body.url === undefined && body.expires_at === undefined && body.password === undefined) return this.detailsOf(row, nowMs);
    const f = this.checkFields(body, nowMs);
    // Only what this request gives: the writer keeps the rest as the row has it when it commits,
    // so an edit made at the same moment to another field is not undone.
    const edit: LinkEdit = {};
    if (f.url !== undefined && f.domain !== undefined) edit.target = { url: f.url, domain: f.domain };
    if (f.expiresMs !== undefined) edit.expiresMs = f.expiresMs;
    if (f.password !== undefined) edit.passwordHash = f.password === null ? null : await hashPassword(f.password);
    await this.deps.writes.run('updateLink', { code, edit, nowMs });
    await this.invalidation.invalidate(code);
    // A new password (or none) owes nothing to the guesses at the old one: a link whose allowance
    // for all clients was used up opens to its visitors again when its owner changes it.
    if (edit.passwordHash !== undefined) this.forgetLinkGuesses(code);
    // A DELETE may have come in between: the link is gone for this request too.
    const updated = this.store.byCode(code);
    if (!updated) throw notFound('No such link.');
    return this.detailsOf(updated);
  }

  /** Deletes a link: afterwards its code answers 404 on every thread. */
  async remove(principal: Principal, code: string): Promise<void> {
    this.owned(principal, code);
    await this.deps.writes.run('removeLink', { code, nowMs: Date.now() });
    await this.invalidation.invalidate(code);
  }

  /** The caller's links, newest first. */
  list(principal: Principal, page: PageRequest): Page<LinkListItem> {
    const nowMs = Date.now();
    const rows = this.store.page(principal.userId, page.before, page.limit + 1);
    return pageOf(rows, page.limit, (r) => this.listItem(r, nowMs), (r) => BigInt(r.id));
  }

  /** A QR code of the link's short URL, `size` pixels square. */
  async qr(principal: Principal, code: string, format: QrFormat, size: number): Promise<{ contentType: string; body: string | Buffer }> {
    const text = this.shortUrl(this.owned(principal, code).code);
    // A quiet zone of 4 modules, as the QR standard asks; `width` scales the symbol to the size.
    const opts = { errorCorrectionLevel: 'M' as const, margin: 4, width: size };
    // Loaded on the first QR code asked for rather than kept in every thread's heap (docs/memory.md).
    const QRCode = require('qrcode') as typeof import('qrcode');
    // qrcode sizes a PNG as the floor of its modules times (width / modules), which floating point
    // takes one pixel under `width` for some sizes (45 of 64 – 1024 for a 37-module symbol); half a
    // pixel more floors to `size` exactly. An SVG takes its width as it is.
    if (format === 'png') return { contentType: 'image/png', body: await QRCode.toBuffer(text, { ...opts, width: size + 0.5, type: 'png' }) };
    return { contentType: 'image/svg+xml', body: await QRCode.toString(text, { ...opts, type: 'svg' }) };
  }

  /**
   * Whose links an export lists: the caller's, or with an admin key any user's (`user`: a handle,
   * `@handle` or user id). Another user's without an admin key is 403; an unknown user 404.
   */
  exportOwner(principal: Principal, user: string | undefined): { id: string; handle: string } {
    if (user === undefined) {
      const self = this.deps.accounts.userById(principal.userId);
      return { id: principal.userId, handle: self?.handle ?? principal.userId };
    }
    const u = this.deps.accounts.userByHandle(user.replace(/^@/, '')) ?? this.deps.accounts.userById(user);
    if (u && u.id === principal.userId) return { id: u.id, handle: u.handle };
    if (!principal.admin) throw forbidden("Only an admin key may export another user's links.");
    if (!u) throw notFound('No such user.');
    return { id: u.id, handle: u.handle };
  }

  /**
   * The export of a user's links, newest first, as chunks of text produced one at a time: the
   * caller writes each before asking for the next, so memory holds one chunk however many links
   * there are. CSV: the contract's header, then a row per link. JSON: an array of the details
   * objects without `daily`.
   */
  *exportChunks(ownerId: string, format: ExportFormat): Generator<string, void, undefined> {
    const nowMs = Date.now();
    yield format === 'csv' ? csvRow(EXPORT_CSV_COLUMNS) : '[';
    let before = TOP;
    let first = true;
    for (;;) {
      const rows = this.store.pageWithTotals(ownerId, before, EXPORT_PAGE);
      if (rows.length === 0) break;
      let chunk = '';
      for (const row of rows) {
        if (format === 'csv') chunk += this.csvLine(row);
        else {
          chunk += (first ? '' : ',') + JSON.stringify(this.exportItem(row, nowMs));
          first = false;
        }
      }
      yield chunk;
      if (rows.length < EXPORT_PAGE) break;
      before = BigInt(rows[rows.length - 1].id);
    }
    if (format === 'json') yield ']';
  }

  private csvLine(row: LinkWithTotals): string {
    return csvRow([
      row.code,
      this.shortUrl(row.code),
      row.url,
      row.created_at,
      row.expires_at ?? '',
      row.password_protected === 1 ? 'true' : 'false',
      String(row.clicks + row.imported_clicks),
      String(row.bots + row.imported_bots),
    ]);
  }

  private exportItem(row: LinkWithTotals, nowMs: number): LinkExportItem {
    return { ...this.listItem(row, nowMs), clicks: this.clickStats(row, row.clicks, row.bots, nowMs) };
  }

  /** What a request for `code` finds: nothing, an expired link, an open one or a protected one. */
  access(code: string, nowMs = Date.now()): LinkAccess {
    const row = this.store.target(code);
    if (row === undefined) return { state: 'unknown' };
    if (row.expires_ms !== null && nowMs >= row.expires_ms) return { state: 'expired' };
    if (row.protected !== 1) return { state: 'open', url: row.url };
    const hash = this.store.passwordHash(code);
    // Its password removed in between: the link is open now.
    return hash === undefined ? { state: 'open', url: row.url } : { state: 'protected', url: row.url, hash };
  }

  /**
   * Whose wrong passwords for a protected link count together: one client address (as its
   * pseudonym: the record is in LMDB, on disk), one code.
   */
  private guessIdentity(client: string, code: string): string {
    // By network: an IPv6 host moving within its /64 is one guesser (core/client-network.ts).
    return PASSWORD_GUESSES + this.deps.pseudonym(clientNetwork(client)) + '|' + code;
  }

  /**
   * The wrong-password limit of a client for a code as it stands, nothing consumed: the headers of
   * an answer that checked no password (a body that carries none, or is too large).
   */
  passwordLimitHeaders(code: string, client: string, nowMs = Date.now()): Record<string, string> {
    return rateLimitHeaders(this.guesses.peek(this.guessIdentity(client, code), this.guessRules, nowMs));
  }

  /** Whose wrong passwords for a protected link count together whatever client sent them: one code. */
  private linkGuessIdentity(code: string): string {
    return LINK_PASSWORD_GUESSES + code;
  }

  /** Gives a link its whole allowance of wrong passwords for all clients back. Best effort. */
  private forgetLinkGuesses(code: string): void {
    try {
      this.guesses.reset(this.linkGuessIdentity(code), this.linkGuessRules);
    } catch (err) {
      // The allowance refills on its own: a store failure only leaves it as it was.
      log.error('rate limiter store failed', { identity: 'link_password_all_clients', reset: true, ...errorFields(err) });
    }
  }

  /**
   * Checks a password sent for a protected link. Each attempt takes one guess up front from the
   * client's allowance for this code, then one from the code's allowance for all clients together
   * (so concurrent guesses cannot exceed either), and a right one gives both back: only wrong
   * guesses count. Throws the 429 when either has none left; a guess the code's allowance refused
   * was never checked, and goes back to the client's. A password that no link could have (outside
   * 4-128 characters) is wrong without costing a guess.
   */
  async unlock(access: { url: string; hash: string }, code: string, client: string, password: string, nowMs = Date.now()): Promise<Unlock> {
    const identity = this.guessIdentity(client, code);
    const linkIdentity = this.linkGuessIdentity(code);
    if (passwordProblem(password) !== undefined) {
      const standing = this.guesses.peek(identity, this.guessRules, nowMs);
      // While the client or the link is locked out it gets the 429 whatever it sends (below: the
      // check refuses without consuming, and says when to try again).
      if (standing.allowed && this.guesses.peek(linkIdentity, this.linkGuessRules, nowMs).allowed) {
        return { ok: false, limitHeaders: rateLimitHeaders(standing) };
      }
    }
    let decision;
    let linkDecision;
    try {
      decision = this.guesses.check(identity, this.guessRules, nowMs);
      if (decision.allowed) {
        linkDecision = this.guesses.check(linkIdentity, this.linkGuessRules, nowMs);
        if (!linkDecision.allowed) this.guesses.refund(identity, this.guessRules, nowMs);
      }
    } catch {
      // Without the count, guessing would be unlimited: refuse for now (fails closed).
      throw unavailable(1, 'Password checks are temporarily unavailable; try again shortly.');
    }
    if (!decision.allowed) {
      this.deps.rejected?.('link_password');
      throw rateLimitError(decision, 'Too many wrong passwords for this link; try again later.', 'link_password');
    }
    if (linkDecision && !linkDecision.allowed) {
      this.deps.rejected?.('link_password_all_clients');
      throw rateLimitError(linkDecision, 'Too many wrong passwords for this link from all its visitors; try again later.', 'link_password_all_clients');
    }
    if (await verifyPassword(password, access.hash)) {
      this.guesses.refund(identity, this.guessRules);
      this.guesses.refund(linkIdentity, this.linkGuessRules);
      return { ok: true, url: access.url, limitHeaders: rateLimitHeaders(this.guesses.peek(identity, this.guessRules)) };
    }
    return { ok: false, limitHeaders: rateLimitHeaders(decision) };
  }
}

/** An entry that failed answers with its error's status and body; anything else is a 500's. */
function failItem(item: BulkItem, err: unknown): void {
  if (!(err instanceof HttpError)) log.error('bulk link creation failed', errorFields(err));
  const e = err instanceof HttpError ? err : new HttpError('internal');
  item.status = e.status;
  item.error = e.body();
}
