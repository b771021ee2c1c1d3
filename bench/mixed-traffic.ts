// The traffic of the mixed scenario: a bounded number of workers (--connections, 32 by default),
// each sending one request at a time over keep-alive connections until the run's end, every
// request drawn from a weighted mix: redirects 100 : 1 link creations, timeline reads 20 : 1
// posts (a fifth of them replies), likes, follows, searches and suggestions.
//
// Why a loop of its own rather than autocannon: the audit needs the answer to every request, tied
// to what the request was (which code was followed and by whom, which post a 201 created, which
// like or follow was answered and so owes a notification), and requests that depend on earlier
// answers (a like of a post created a moment ago, a redirect of a link just made). autocannon
// reports counts and latencies, not the answer of each request. The loop is Node's http client
// with a keep-alive agent; it costs more per request than autocannon, which is why the mixed
// figure is a ratio against the same loop sending the same mix to a bare uWS server.
import { Agent, request } from 'node:http';
import type { Seeded } from './seed';
import { seededInts, zipfSampler } from './seed';

/** The kinds of request, with their weights in the mix. */
export const MIX = {
  redirect: 500,
  shorten: 5,
  timeline: 200,
  post: 10,
  like: 30,
  follow: 5,
  search: 50,
  suggest: 100,
} as const;
export type Kind = keyof typeof MIX;
export const KINDS = Object.keys(MIX) as Kind[];

/** The status each kind answers when all goes well (a redirect: 302). */
const EXPECTED: Record<Kind, number> = { redirect: 302, shorten: 201, timeline: 200, post: 201, like: 204, follow: 200, search: 200, suggest: 200 };

/** A share of the redirects come from a crawler, and a share are HEAD requests: both count as bots, never as clicks. */
const BOT_EVERY = 20;
const HEAD_EVERY = 50;
export const CRAWLER_AGENT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const BROWSER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
/** Notifications keep the newest 100 actors of a row in actor_ids: stay below, so that a delivered row names every actor it owes. */
const MAX_ACTORS_PER_ROW = 90;
const REPLY_EVERY = 5;

export interface KindStats {
  requests: number;
  latencies: number[];
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Requests that got no answer (a connection error). */
  no_answer: number;
}

/** What the audit needs: every answered write and every click, as the client saw them. */
export interface Ledger {
  /** Short code → target, of every link created with a 201 in the run. */
  created: Map<string, string>;
  /** Short code → 302s served to people (clicks) and to bots. */
  clicks: Map<string, { people: number; bots: number }>;
  /** 302s whose Location was not the link's target. */
  wrongLocation: number;
  /** Id → author of every post answered 201. */
  posts: Map<string, string>;
  /** Recipient → the notifications owed, as "type|post id|actor" ('' for a follow's post). */
  owed: Map<string, Set<string>>;
  /** Likes, follows and posts that got no answer: each may or may not have happened. */
  unanswered: number;
}

export interface World {
  users: Seeded[];
  /** Users following others before the run: "follower|followee". */
  follows: Set<string>;
  /** Code → target of the links seeded before the run. */
  links: Map<string, string>;
  /** Id → author of the posts seeded before the run. */
  posts: Map<string, string>;
  words: string[];
  queries: string[];
}

export interface TrafficResult {
  seconds: number;
  requests: number;
  byKind: Record<Kind, KindStats>;
}

/** A notification key as the audit compares them. */
export function notificationKey(type: string, postId: string | null | undefined, actorId: string): string {
  return `${type}|${postId ?? ''}|${actorId}`;
}

interface Reply {
  status: number;
  location?: string;
  body?: string;
}

/**
 * One mix of traffic against a server. With a ledger, every answer is booked and the targets of
 * later requests grow with what earlier ones created; without one (the baseline), requests draw
 * only from what was seeded.
 */
export class MixedTraffic {
  private readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;
  private readonly rand = seededInts(42);
  private readonly rank: () => number;
  private readonly cumulative: Array<[number, Kind]> = [];
  private readonly totalWeight: number;
  private readonly linkCodes: string[];
  private readonly linkTargets: Map<string, string>;
  private readonly postIds: string[];
  private readonly postAuthors: Map<string, string>;
  private readonly likes = new Set<string>();
  private readonly follows: Set<string>;
  private readonly actorsPerRow = new Map<string, number>();
  private sequence = 0;
  readonly byKind = {} as Record<Kind, KindStats>;

  constructor(
    url: string,
    private readonly world: World,
    connections: number,
    private readonly ledger?: Ledger,
  ) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
    this.rank = zipfSampler(world.words.length, 3);
    let sum = 0;
    for (const kind of KINDS) {
      sum += MIX[kind];
      this.cumulative.push([sum, kind]);
      this.byKind[kind] = { requests: 0, latencies: [], statuses: {}, no_answer: 0 };
    }
    this.totalWeight = sum;
    this.linkTargets = new Map(world.links);
    this.linkCodes = [...world.links.keys()];
    this.postAuthors = new Map(world.posts);
    this.postIds = [...world.posts.keys()];
    this.follows = new Set(world.follows);
  }

  /** Runs `connections` workers for `seconds`; `onSecond` hears the requests answered so far. */
  async run(seconds: number, connections: number, onSecond?: (answered: number) => void): Promise<TrafficResult> {
    const started = performance.now();
    const end = started + seconds * 1000;
    let answered = 0;
    const ticker = onSecond ? setInterval(() => onSecond(answered), 1000) : undefined;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < end) {
          await this.one();
          answered++;
        }
      }),
    );
    if (ticker) clearInterval(ticker);
    this.agent.destroy();
    return { seconds: (performance.now() - started) / 1000, requests: answered, byKind: this.byKind };
  }

  private pick(): Kind {
    const x = this.rand(this.totalWeight);
    for (const [upTo, kind] of this.cumulative) if (x < upTo) return kind;
    return 'redirect';
  }

  private user(): Seeded {
    return this.world.users[this.rand(this.world.users.length)];
  }

  private text(): string {
    const words: string[] = [];
    for (let k = 0, n = 8 + this.rand(13); k < n; k++) words.push(this.world.words[this.rank()]);
    return words.join(' ');
  }

  private async one(): Promise<void> {
    const kind = this.pick();
    switch (kind) {
      case 'redirect':
        return this.redirect();
      case 'shorten': {
        const url = `https://site${this.rand(500)}.example/article/${++this.sequence}?ref=mixed`;
        const r = await this.send(kind, 'POST', '/api/shorten', { key: this.user().key, body: JSON.stringify({ url }), wantBody: true });
        if (this.ledger && r?.status === 201) {
          const code = (JSON.parse(r.body!) as { short_code: string }).short_code;
          this.ledger.created.set(code, url);
          this.linkTargets.set(code, url);
          this.linkCodes.push(code);
        }
        return;
      }
      case 'timeline':
        await this.send(kind, 'GET', '/api/timeline?limit=20', { key: this.user().key });
        return;
      case 'post':
        return this.post();
      case 'like':
        return this.like();
      case 'follow':
        return this.follow();
      case 'search': {
        const q = this.world.queries[this.rand(this.world.queries.length)];
        await this.send(kind, 'GET', `/api/search?q=${encodeURIComponent(q)}`, { key: this.user().key });
        return;
      }
      case 'suggest': {
        const q = this.world.queries[this.rand(this.world.queries.length)];
        await this.send(kind, 'GET', `/api/suggest?prefix=${encodeURIComponent(q.slice(0, 1 + this.rand(4)))}`, {});
        return;
      }
    }
  }

  private async redirect(): Promise<void> {
    const code = this.linkCodes[this.rand(this.linkCodes.length)];
    const n = this.rand(1000);
    const head = n % HEAD_EVERY === 0;
    const crawler = !head && n % BOT_EVERY === 1;
    const headers: Record<string, string> = { 'user-agent': crawler ? CRAWLER_AGENT : BROWSER_AGENT };
    if (n % 3 === 0) headers.referer = 'https://news.example/item?id=' + (n % 97);
    const r = await this.send('redirect', head ? 'HEAD' : 'GET', '/' + code, { headers });
    if (!this.ledger || r?.status !== 302) return;
    this.bookClick(code, head || crawler, r.location);
  }

  /** Books a 302 served for `code` (to a bot or a person), and whether it pointed at the link's target. */
  bookClick(code: string, bot: boolean, location: string | undefined): void {
    const ledger = this.ledger!;
    let c = ledger.clicks.get(code);
    if (!c) ledger.clicks.set(code, (c = { people: 0, bots: 0 }));
    if (bot) c.bots++;
    else c.people++;
    if (location !== this.linkTargets.get(code)) ledger.wrongLocation++;
  }

  private owe(recipient: string, type: string, postId: string | null, actor: string): void {
    if (recipient === actor) return;
    let set = this.ledger!.owed.get(recipient);
    if (!set) this.ledger!.owed.set(recipient, (set = new Set()));
    set.add(notificationKey(type, postId, actor));
  }

  /** A row of notifications may take one more actor (see MAX_ACTORS_PER_ROW); counts it if so. */
  private rowTakes(row: string): boolean {
    const n = this.actorsPerRow.get(row) ?? 0;
    if (n >= MAX_ACTORS_PER_ROW) return false;
    this.actorsPerRow.set(row, n + 1);
    return true;
  }

  private async post(): Promise<void> {
    const author = this.user();
    let replyTo: string | undefined;
    if (this.rand(REPLY_EVERY) === 0) {
      const parent = this.postIds[this.rand(this.postIds.length)];
      if (this.rowTakes('reply|' + parent)) replyTo = parent;
    }
    const body = JSON.stringify(replyTo ? { text: this.text(), reply_to: replyTo } : { text: this.text() });
    const r = await this.send('post', 'POST', '/api/posts', { key: author.key, body, wantBody: true });
    if (!this.ledger) return;
    if (r === undefined) this.ledger.unanswered++;
    if (r?.status !== 201) return;
    const id = (JSON.parse(r.body!) as { id: string }).id;
    this.ledger.posts.set(id, author.userId);
    this.postAuthors.set(id, author.userId);
    this.postIds.push(id);
    if (replyTo) this.owe(this.postAuthors.get(replyTo)!, 'reply', replyTo, author.userId);
  }

  private async like(): Promise<void> {
    // A like that has not been made yet, of someone else's post whose row has room for its actor.
    for (let attempt = 0; attempt < 5; attempt++) {
      const liker = this.user();
      const postId = this.postIds[this.rand(this.postIds.length)];
      const pair = liker.userId + '|' + postId;
      if (this.postAuthors.get(postId) === liker.userId || this.likes.has(pair) || !this.rowTakes('like|' + postId)) continue;
      this.likes.add(pair);
      const r = await this.send('like', 'POST', `/api/posts/${postId}/like`, { key: liker.key });
      if (!this.ledger) return;
      if (r === undefined) this.ledger.unanswered++;
      if (r?.status === 204) this.owe(this.postAuthors.get(postId)!, 'like', postId, liker.userId);
      return;
    }
    await this.send('timeline', 'GET', '/api/timeline?limit=20', { key: this.user().key });
  }

  private async follow(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const follower = this.user();
      const followee = this.user();
      const pair = follower.userId + '|' + followee.userId;
      if (follower === followee || this.follows.has(pair) || !this.rowTakes('follow|' + followee.userId)) continue;
      this.follows.add(pair);
      const r = await this.send('follow', 'POST', `/api/users/${followee.userId}/follow`, { key: follower.key });
      if (!this.ledger) return;
      if (r === undefined) this.ledger.unanswered++;
      if (r?.status === 200) this.owe(followee.userId, 'follow', null, follower.userId);
      return;
    }
    await this.send('timeline', 'GET', '/api/timeline?limit=20', { key: this.user().key });
  }

  /** One request; books its latency and status under `kind`. Undefined when it got no answer. */
  send(kind: Kind, method: string, path: string, opts: { key?: string; body?: string; headers?: Record<string, string>; wantBody?: boolean }): Promise<Reply | undefined> {
    const stats = this.byKind[kind];
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(opts.body));
    }
    const started = performance.now();
    return new Promise((resolve) => {
      const req = request({ host: this.host, port: this.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        if (opts.wantBody) res.on('data', (d: Buffer) => chunks.push(d));
        else res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          stats.requests++;
          stats.latencies.push(performance.now() - started);
          stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
          resolve({ status, location: res.headers.location, body: opts.wantBody ? Buffer.concat(chunks).toString('utf8') : undefined });
        });
      });
      req.on('error', () => {
        stats.requests++;
        stats.no_answer++;
        resolve(undefined);
      });
      req.end(opts.body);
    });
  }

  /** Requests of a kind whose answer was not the one it should have had (no answer included). */
  static unexpected(kind: Kind, stats: KindStats): number {
    return stats.requests - (stats.statuses[EXPECTED[kind]] ?? 0);
  }
}
