// Click events and their aggregation, pure. A click event is what the redirect path enqueues:
// when, which code, the referring host (never the full referrer, never the client address) and
// whether a bot made it, plus the browser and OS families the drain derived from the User-Agent.
// The drain turns batches of events into additive counters.

export interface ClickEvent {
  code: string;
  atMs: number;
  /** Host of the Referer header, lower case; '' when there was none. */
  referrer: string;
  bot: boolean;
  /** Browser and OS families of a person's click; absent for bots and for clicks queued without them. */
  browser?: string;
  os?: string;
}

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;

/**
 * Host of a Referer header value, lower case, without port or credentials; '' when there is no
 * usable host. Written with indexOf instead of URL/regex because it runs on the redirect path.
 */
export function referrerHost(referer: string): string {
  if (referer === '') return '';
  const scheme = referer.indexOf('://');
  if (scheme <= 0) return '';
  let start = scheme + 3;
  let end = referer.length;
  for (let i = start; i < referer.length; i++) {
    const c = referer.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  const at = referer.lastIndexOf('@', end);
  if (at >= start) start = at + 1;
  let host = referer.slice(start, end);
  if (host.charCodeAt(0) === 91 /* [ */) {
    const close = host.indexOf(']');
    host = close === -1 ? '' : host.slice(0, close + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  if (host.length > 253) return '';
  host = host.toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** UTC calendar day of a time, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A link's human clicks and bot clicks on one UTC day. */
export interface DailyRow { code: string; day: string; clicks: number; bots: number }
/** A link's human clicks in one minute since the epoch; feeds last_24h. */
export interface MinuteRow { code: string; minute: number; clicks: number }
/** A link's human clicks from one referrer host, or 'direct'. */
export interface ReferrerRow { code: string; referrer: string; clicks: number }
/** A link's human clicks from one browser or OS family. */
export interface FamilyRow { code: string; name: string; clicks: number }

/** A batch's counters as rows, one per link and key; no two rows of a list share both. */
export interface ClickAggregate {
  daily: DailyRow[];
  minutes: MinuteRow[];
  referrers: ReferrerRow[];
  browsers: FamilyRow[];
  os: FamilyRow[];
  events: number;
}

function emptyAggregate(events: number): ClickAggregate {
  return { daily: [], minutes: [], referrers: [], browsers: [], os: [], events };
}

/** One link's counters while a batch is aggregated, each row keyed by the rest of its key. */
interface LinkCounters {
  daily: Map<string, DailyRow>;
  minutes: Map<number, MinuteRow>;
  referrers: Map<string, ReferrerRow>;
  browsers: Map<string, FamilyRow>;
  os: Map<string, FamilyRow>;
}

function countName(map: Map<string, FamilyRow>, code: string, name: string): void {
  const row = map.get(name);
  if (row) row.clicks++;
  else map.set(name, { code, name, clicks: 1 });
}

/**
 * Adds a batch of events into counters; bots count only as bots, never as clicks or referrers.
 * Counted per link, so that each click looks up its link once and then keys that are strings it
 * already has (the day, the referrer, the families) or numbers (the minute), never a key string
 * joined for every counter of every click. Rows come out grouped by link, links in the order of
 * their first click.
 */
export function aggregateClicks(events: Iterable<ClickEvent>): ClickAggregate {
  const links = new Map<string, LinkCounters>();
  let count = 0;
  // Batches are time-ordered, so the day string of the previous event almost always fits.
  let dayNumber = NaN;
  let day = '';
  for (const e of events) {
    count++;
    const n = Math.floor(e.atMs / DAY_MS);
    if (n !== dayNumber) {
      dayNumber = n;
      day = utcDay(e.atMs);
    }
    const code = e.code;
    let link = links.get(code);
    if (!link) links.set(code, (link = { daily: new Map(), minutes: new Map(), referrers: new Map(), browsers: new Map(), os: new Map() }));
    let d = link.daily.get(day);
    if (!d) link.daily.set(day, (d = { code, day, clicks: 0, bots: 0 }));
    if (e.bot) {
      d.bots++;
      continue;
    }
    d.clicks++;
    const minute = Math.floor(e.atMs / MINUTE_MS);
    let m = link.minutes.get(minute);
    if (!m) link.minutes.set(minute, (m = { code, minute, clicks: 0 }));
    m.clicks++;
    const referrer = e.referrer || 'direct';
    let r = link.referrers.get(referrer);
    if (!r) link.referrers.set(referrer, (r = { code, referrer, clicks: 0 }));
    r.clicks++;
    if (e.browser !== undefined) countName(link.browsers, code, e.browser);
    if (e.os !== undefined) countName(link.os, code, e.os);
  }
  const agg = emptyAggregate(count);
  // One push a row: a link's rows can outnumber what a spread into one call may pass.
  for (const link of links.values()) {
    for (const row of link.daily.values()) agg.daily.push(row);
    for (const row of link.minutes.values()) agg.minutes.push(row);
    for (const row of link.referrers.values()) agg.referrers.push(row);
    for (const row of link.browsers.values()) agg.browsers.push(row);
    for (const row of link.os.values()) agg.os.push(row);
  }
  return agg;
}

/**
 * Splits an aggregate into parts of at most `maxLinks` links each, every row of a link in the
 * same part, links in the order they first appear in `daily` (where every click has a row): the
 * same aggregate always splits the same way. The event count goes with the first part.
 */
export function splitAggregate(agg: ClickAggregate, maxLinks: number): ClickAggregate[] {
  const partOf = new Map<string, number>();
  for (const d of agg.daily) if (!partOf.has(d.code)) partOf.set(d.code, Math.floor(partOf.size / maxLinks));
  const parts: ClickAggregate[] = [];
  for (let i = 0; i < Math.ceil(partOf.size / maxLinks); i++) {
    parts.push(emptyAggregate(i === 0 ? agg.events : 0));
  }
  for (const d of agg.daily) parts[partOf.get(d.code)!].daily.push(d);
  for (const m of agg.minutes) parts[partOf.get(m.code)!].minutes.push(m);
  for (const r of agg.referrers) parts[partOf.get(r.code)!].referrers.push(r);
  for (const b of agg.browsers) parts[partOf.get(b.code)!].browsers.push(b);
  for (const o of agg.os) parts[partOf.get(o.code)!].os.push(o);
  return parts;
}

/** `days` consecutive UTC days ending today, oldest first, zero days included. */
export function dailySeries(counts: ReadonlyMap<string, number>, nowMs: number, days = 30): Array<{ date: string; count: number }> {
  const out: Array<{ date: string; count: number }> = [];
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  for (let i = days - 1; i >= 0; i--) {
    const date = utcDay(today - i * DAY_MS);
    out.push({ date, count: counts.get(date) ?? 0 });
  }
  return out;
}
