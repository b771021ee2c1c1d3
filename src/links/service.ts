// The short-link capability of one HTTP thread: creation, details, edits, deletion and listing.
// The redirect itself lives in redirect.ts and only shares the cache and the click queue.
import type { Config } from '../config';
import type { Principal } from '../accounts/store';
import { dailySeries, MINUTE_MS } from '../core/clicks';
import { checkTargetUrl } from '../core/link-url';
import type { CursorCodec } from '../core/cursor';
import { MAX_LIMIT, parseLimit } from '../core/page-limit';
import { invalidField, invalidRequest, notFound, unavailable, type ErrorDetail } from '../http/errors';
import { parseWith, type Reply } from '../http/router';
import type { RateLimits } from '../ratelimit/policies';
import type { Sqlite } from '../store/sqlite';
import type { WriterClient } from '../social/group-commit';
import type { HotStore, LmdbDb } from '../store/lmdb';
import { openFlagMirror } from './anomaly';
import { CacheInvalidation, RedirectCache } from './cache';
import { ClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { isoTimestamp, patchBody, shortenBody } from './schema';
import { LinkStore, type LinkRow } from './store';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface LinkDeps {
  config: Config;
  sqlite: Sqlite;
  hot: HotStore;
  limits: RateLimits;
  newId: () => string;
  /** Leased node id of this thread: makes click-queue keys unique across threads. */
  nodeId: number;
  /** Links are created, edited and deleted by the writer (links/writes.ts). */
  writes: WriterClient;
  /** Issues and checks the cursors of GET /api/links. */
  cursors: CursorCodec;
}

export class LinkService {
  readonly store: LinkStore;
  readonly pool: CodePool;
  readonly cache: RedirectCache;
  readonly invalidation: CacheInvalidation;
  readonly clicks: ClickQueue;
  readonly flags: LmdbDb<number, string>;
  readonly origin: string;

  constructor(private readonly deps: LinkDeps) {
    const { config, sqlite, hot } = deps;
    this.store = new LinkStore(sqlite);
    this.pool = new CodePool(hot, config.links.code_length);
    this.cache = new RedirectCache(hot, this.store, config.links.cache_ttl_seconds * 1000);
    this.invalidation = new CacheInvalidation(this.cache, config.server.threads - 1);
    this.clicks = new ClickQueue(hot, deps.nodeId);
    this.flags = openFlagMirror(hot);
    this.origin = config.server.public_origin.replace(/\/+$/, '');
  }

  close(): void {
    this.invalidation.close();
    // Clicks of the current event-loop turn; the store's close waits for the write.
    this.clicks.flush();
  }

  private shortUrl(code: string): string {
    return this.origin + '/' + code;
  }

  /** Checks url and expires_at; collects every problem into one 400. */
  private checkFields(url: string | undefined, expiresAt: string | null | undefined, nowMs: number): { url?: string; domain?: string; expiresMs?: number | null } {
    const details: ErrorDetail[] = [];
    const out: { url?: string; domain?: string; expiresMs?: number | null } = {};
    if (url !== undefined) {
      const c = checkTargetUrl(url, { publicOrigin: this.deps.config.server.public_origin, blocklist: this.deps.config.links.blocklist });
      if (c.ok) {
        out.url = c.url;
        out.domain = c.domain;
      } else {
        details.push({ path: 'url', message: c.message });
      }
    }
    if (expiresAt === null) out.expiresMs = null;
    else if (expiresAt !== undefined) {
      const ms = isoTimestamp.safeParse(expiresAt).success ? Date.parse(expiresAt) : NaN;
      if (Number.isNaN(ms)) details.push({ path: 'expires_at', message: 'must be an ISO 8601 timestamp with a time zone' });
      else if (ms <= nowMs) details.push({ path: 'expires_at', message: 'must be in the future' });
      else out.expiresMs = ms;
    }
    if (details.length === 1) throw invalidField(details[0].path, details[0].message);
    if (details.length > 1) throw invalidRequest(details);
    return out;
  }

  private present(row: LinkRow) {
    return {
      short_code: row.code,
      short_url: this.shortUrl(row.code),
      url: row.url,
      created_at: row.created_at,
      expires_at: row.expires_at,
    };
  }

  /** POST /api/shorten. */
  async shorten(principal: Principal, input: unknown): Promise<Reply> {
    const nowMs = Date.now();
    const { limits } = this.deps;
    // A flagged account is throttled before its numeric limits are even consulted.
    const flaggedUntil = this.flags.get(principal.userId);
    if (flaggedUntil !== undefined && flaggedUntil > nowMs) {
      limits.throttled(principal.keyId, (flaggedUntil - nowMs) / 1000, 'This account is creating links unusually fast and is throttled for a while.', nowMs);
    }
    // Bad input is rejected before any token is taken. Error answers of this route show the
    // limiter state as it stands (the route's errorHeaders), so they need nothing added here.
    const body = parseWith(shortenBody, input);
    const fields = this.checkFields(body.url, body.expires_at, nowMs);
    const headers = limits.enforceShorten(principal.keyId, nowMs);
    let row: LinkRow;
    try {
      const code = await this.drawCode();
      if (code === undefined) {
        throw unavailable(1, 'No short codes are available right now; try again shortly.');
      }
      row = await this.deps.writes.run('insertLink', {
        code,
        id: this.deps.newId(),
        ownerId: principal.userId,
        url: fields.url!,
        domain: fields.domain!,
        createdMs: Date.now(),
        expiresMs: fields.expiresMs ?? null,
      });
    } catch (err) {
      // Nothing was created: the creation taken above goes back to the key's limits (so the
      // error's limiter headers, read after this, show it back).
      limits.refundShorten(principal.keyId);
      throw err;
    }
    headers['Location'] = '/api/links/' + row.code;
    return { status: 201, json: this.present(row), headers };
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

  details(principal: Principal, code: string): Reply {
    return { status: 200, json: this.detailsOf(this.owned(principal, code)) };
  }

  private detailsOf(row: LinkRow, nowMs = Date.now()) {
    const byDay = new Map<string, number>();
    let total = 0;
    let bots = 0;
    for (const d of this.store.dailyCounts(row.code)) {
      byDay.set(d.day, d.clicks);
      total += d.clicks;
      bots += d.bots;
    }
    const minuteNow = Math.floor(nowMs / MINUTE_MS);
    return {
      short_code: row.code,
      short_url: this.shortUrl(row.code),
      url: row.url,
      created_at: row.created_at,
      updated_at: row.updated_at,
      expires_at: row.expires_at,
      status: row.expires_ms !== null && row.expires_ms <= nowMs ? 'expired' : 'active',
      clicks: {
        total,
        last_24h: this.store.clicksSinceMinute(row.code, minuteNow - 24 * 60),
        daily: dailySeries(byDay, nowMs, 30),
        referrers: this.store.topReferrers(row.code, 10).map((r) => ({ referrer: r.referrer, count: r.clicks })),
        bots,
      },
    };
  }

  /** PATCH /api/links/{code}: same rules as creation; redirects see the change at once. */
  async patch(principal: Principal, code: string, input: unknown): Promise<Reply> {
    const nowMs = Date.now();
    const row = this.owned(principal, code);
    const body = parseWith(patchBody, input);
    if (body.url === undefined && body.expires_at === undefined) {
      throw invalidRequest([{ path: '', message: 'give url and/or expires_at' }], 'Nothing to change: give url and/or expires_at.');
    }
    const f = this.checkFields(body.url, body.expires_at, nowMs);
    const url = f.url ?? row.url;
    const domain = f.domain ?? row.domain;
    const expiresMs = f.expiresMs !== undefined ? f.expiresMs : row.expires_ms;
    await this.deps.writes.run('updateLink', { code, url, domain, expiresMs, nowMs });
    await this.invalidation.invalidate(code);
    return { status: 200, json: this.detailsOf(this.store.byCode(code)!) };
  }

  /** DELETE /api/links/{code}: afterwards the code answers 404 on every thread. */
  async remove(principal: Principal, code: string): Promise<Reply> {
    this.owned(principal, code);
    await this.deps.writes.run('removeLink', { code });
    await this.invalidation.invalidate(code);
    return { status: 204 };
  }

  /** GET /api/links: the caller's links, newest first. */
  list(principal: Principal, query: URLSearchParams): Reply {
    const details: ErrorDetail[] = [];
    // The list's cursors are this user's: another user's cursor does not decode here.
    const kind = `links:${principal.userId}`;
    const limit = parseLimit(query.get('limit'));
    if (Number.isNaN(limit)) details.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
    let after: string | null = null;
    const rawCursor = query.get('cursor');
    if (rawCursor !== null && rawCursor !== '') {
      after = this.deps.cursors.decode(kind, rawCursor, 1)?.[0] ?? null;
      if (after === null) details.push({ path: 'cursor', message: 'is not a cursor issued by this server' });
    }
    if (details.length) throw invalidRequest(details);
    const rows = this.store.page(principal.userId, after, limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const nowMs = Date.now();
    const items = page.map((r) => ({
      ...this.present(r),
      updated_at: r.updated_at,
      status: r.expires_ms !== null && r.expires_ms <= nowMs ? 'expired' : 'active',
    }));
    const next = more ? this.deps.cursors.encode(kind, [page[page.length - 1].id]) : null;
    return { status: 200, json: { items, next_cursor: next } };
  }
}
