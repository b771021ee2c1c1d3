// The short-link capability of one HTTP thread: creation, details, edits, deletion and listing,
// independent of HTTP: methods take checked input and return domain objects, and routes.ts turns
// them into replies. The redirect itself lives in redirect.ts and only shares the cache and the
// click queue.
import type { Config } from '../config';
import type { Principal } from '../accounts/store';
import { dailySeries, MINUTE_MS } from '../core/clicks';
import { checkTargetUrl } from '../core/link-url';
import { invalidField, invalidRequest, notFound, unavailable, type ErrorDetail } from '../http/errors';
import { pageOf, type Page, type PageRequest } from '../http/paging';
import type { PubSub } from '../pubsub/port';
import type { RateLimits } from '../ratelimit/policies';
import type { Sqlite } from '../store/sqlite';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { Writes } from '../writer/operations';
import { openFlagMirror } from './anomaly';
import { CacheInvalidation, RedirectCache } from './cache';
import { ClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { isoTimestamp, type PatchBody, type ShortenBody } from './schema';
import { LinkStore, type LinkRow } from './store';
import type { LinkWrites } from './writes';

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
  writes: Writes<LinkWrites>;
  /** Reaches the other HTTP threads, whose redirect caches an edit must empty. */
  pubsub: PubSub;
}

/** A link as creation answers it. */
export interface LinkSummary {
  short_code: string;
  short_url: string;
  url: string;
  created_at: string;
  expires_at: string | null;
}

export interface LinkListItem extends LinkSummary {
  updated_at: string;
  status: 'active' | 'expired';
}

export interface LinkDetails extends LinkListItem {
  clicks: {
    total: number;
    last_24h: number;
    daily: Array<{ date: string; count: number }>;
    referrers: Array<{ referrer: string; count: number }>;
    bots: number;
  };
}

/** A created link, and the creator's rate-limit headers after the creation. */
export interface Created {
  link: LinkSummary;
  limitHeaders: Record<string, string>;
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
    this.invalidation = new CacheInvalidation(this.cache, deps.pubsub);
    this.clicks = new ClickQueue(hot, deps.nodeId);
    this.flags = openFlagMirror(hot);
    this.origin = config.server.public_origin.replace(/\/+$/, '');
  }

  close(): void {
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

  private summary(row: LinkRow): LinkSummary {
    return {
      short_code: row.code,
      short_url: this.shortUrl(row.code),
      url: row.url,
      created_at: row.created_at,
      expires_at: row.expires_at,
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

  /** Creates a link; bad input is rejected before any of the caller's limits is taken. */
  async shorten(principal: Principal, body: ShortenBody): Promise<Created> {
    const nowMs = Date.now();
    const { limits } = this.deps;
    const fields = this.checkFields(body.url, body.expires_at, nowMs);
    const limitHeaders = limits.enforceShorten(principal.keyId, nowMs);
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
    return { link: this.summary(row), limitHeaders };
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
    const minuteNow = Math.floor(nowMs / MINUTE_MS);
    return {
      ...this.listItem(row, nowMs),
      clicks: {
        total,
        last_24h: this.store.clicksSinceMinute(row.code, minuteNow - 24 * 60),
        daily: dailySeries(byDay, nowMs, 30),
        referrers: this.store.topReferrers(row.code, 10).map((r) => ({ referrer: r.referrer, count: r.clicks })),
        bots,
      },
    };
  }

  /** Edits a link (same rules as creation); redirects see the change at once. */
  async patch(principal: Principal, code: string, body: PatchBody): Promise<LinkDetails> {
    const nowMs = Date.now();
    const row = this.owned(principal, code);
    if (body.url === undefined && body.expires_at === undefined) {
      throw invalidRequest([{ path: '', message: 'give url and/or expires_at' }], 'Nothing to change: give url and/or expires_at.');
    }
    const f = this.checkFields(body.url, body.expires_at, nowMs);
    const url = f.url ?? row.url;
    const domain = f.domain ?? row.domain;
    const expiresMs = f.expiresMs !== undefined ? f.expiresMs : row.expires_ms;
    await this.deps.writes.run('updateLink', { code, url, domain, expiresMs, nowMs });
    await this.invalidation.invalidate(code);
    // A DELETE may have come in between: the link is gone for this request too.
    const updated = this.store.byCode(code);
    if (!updated) throw notFound('No such link.');
    return this.detailsOf(updated);
  }

  /** Deletes a link: afterwards its code answers 404 on every thread. */
  async remove(principal: Principal, code: string): Promise<void> {
    this.owned(principal, code);
    await this.deps.writes.run('removeLink', { code });
    await this.invalidation.invalidate(code);
  }

  /** The caller's links, newest first. */
  list(principal: Principal, page: PageRequest): Page<LinkListItem> {
    const nowMs = Date.now();
    const rows = this.store.page(principal.userId, page.before, page.limit + 1);
    return pageOf(rows, page.limit, (r) => this.listItem(r, nowMs), (r) => BigInt(r.id));
  }
}
