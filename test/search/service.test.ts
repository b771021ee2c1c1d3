// Search over a real engine and a real main database, below HTTP: matching rules, both orders
// and their pages, deleted posts, and user text that FTS5 would otherwise read as syntax.
import t from 'tap';
import { seededInts } from '../fixtures/random';
import { checkSearchQuery, ftsMatchExpression } from '../../src/core/search-query';
import { TOP } from '../../src/core/snowflake';
import { QueryStream } from '../../src/search/query-stream';
import { RelevanceSnapshots, SNAPSHOT_TTL_MS } from '../../src/search/relevance-snapshots';
import { SearchService, type RelevancePosition } from '../../src/search/service';
import { SuggestionIndex } from '../../src/search/suggestions';
import type { IndexOp } from '../../src/search/engine';
import { SocialStore } from '../../src/social/store';
import { IndexSourceStore } from '../../src/search/store';
import { rebuildIndex } from '../../src/search/rebuild';
import { ALICE, BOB, searchFixture, type SearchFixture } from './helpers';

async function indexed(f: SearchFixture, author: string, texts: string[], firstId: bigint): Promise<string[]> {
  const ids = f.post(author, texts, firstId);
  const ops: IndexOp[] = ids.map((id, i) => ({ op: 'index', id, text: texts[i] }));
  t.equal((await f.engine.bulk(ops)).accepted, true);
  f.engine.applyQueued(10_000);
  return ids;
}

/** Posts indexed the way a rebuild (`perch reindex`, a first start) indexes them. */
function rebuilt(f: SearchFixture, author: string, texts: string[], firstId: bigint): string[] {
  const ids = f.post(author, texts, firstId);
  rebuildIndex(new IndexSourceStore(f.db), f.engine.store);
  return ids;
}

function service(f: SearchFixture, partsGeneration?: number): SearchService {
  return new SearchService(f.engine.store, new SocialStore(f.db), new SuggestionIndex(f.hot), new RelevanceSnapshots(f.hot, 1), new QueryStream(f.hot, 1), 3_600_000, partsGeneration);
}

const match = (q: string) => {
  const c = checkSearchQuery(q);
  if (!c.ok) throw new Error(c.message);
  return ftsMatchExpression(c.terms);
};

t.test('every term must match, case and diacritics folded; items are hydrated like timeline items', async (t) => {
  const f = await searchFixture(t);
  const [cafe, , resume] = await indexed(f, ALICE, ['Le CAFÉ du coin', 'cafe society', 'Mon résumé, naïvement', 'un autre café noir'], 100n);
  const s = service(f);
  t.same(s.recent(match('cafe'), TOP, 20).items.map((i) => i.id), ['103', '101', cafe]);
  t.same(s.recent(match('Café COIN'), TOP, 20).items.map((i) => i.id), [cafe], 'both words');
  t.same(s.recent(match('resume naivement'), TOP, 20).items.map((i) => i.id), [resume]);
  t.same(s.recent(match('cafe absent'), TOP, 20).items, [], 'one word missing: no match');
  t.same(s.recent(match('caf'), TOP, 20).items, [], 'words, not prefixes');
  const item = s.recent(match('coin'), TOP, 20).items[0];
  t.same(Object.keys(item), ['id', 'text', 'author_id', 'media_ids', 'reply_to', 'created_at', 'like_count', 'reply_count', 'author']);
  t.same(item.author, { id: ALICE, handle: 'alice' });
  t.equal(item.text, 'Le CAFÉ du coin');
});

t.test('compatibility forms and ß match their plain letters, indexed by the queue or by a rebuild', async (t) => {
  const texts = ['Ｆｕｌｌ width words', 'a ﬁne day', 'Straße und Strasse', 'plain full fine'];
  const check = (f: SearchFixture, ids: string[], how: string) => {
    const s = service(f);
    const found = (q: string) => s.recent(match(q), TOP, 20).items.map((i) => i.id);
    t.same(found('Ｆｕｌｌ'), [ids[3], ids[0]], `${how}: a fullwidth word finds itself and its plain form`);
    t.same(found('full width'), [ids[0]], `${how}: the plain word finds the fullwidth one`);
    t.same(found('fine'), [ids[3], ids[1]], `${how}: the ligature's letters`);
    t.same(found('ﬁne'), [ids[3], ids[1]], `${how}: the ligature itself`);
    t.same(found('strasse'), [ids[2]], `${how}: ss finds ß`);
    t.same(found('STRAẞE und'), [ids[2]], `${how}: capital sharp s`);
  };
  const queued = await searchFixture(t);
  const ids = await indexed(queued, ALICE, texts, 300n);
  check(queued, ids, 'queued');
  const fromRebuild = await searchFixture(t);
  check(fromRebuild, rebuilt(fromRebuild, ALICE, texts, 300n), 'rebuilt');
});

t.test('recent pages: newest first, deleted posts skipped, nothing twice, nothing missed', async (t) => {
  const f = await searchFixture(t);
  const ids = await indexed(f, BOB, Array.from({ length: 25 }, (_, i) => `alpha number ${i}`), 1000n);
  for (const i of [0, 7, 8, 9, 24]) f.remove(BOB, ids[i]);
  const live = ids.filter((_, i) => ![0, 7, 8, 9, 24].includes(i)).reverse();
  const s = service(f);
  const seen: string[] = [];
  let before = TOP;
  for (let page = 0; page < 10; page++) {
    const p = s.recent(match('alpha'), before, 7);
    seen.push(...p.items.map((i) => i.id));
    if (p.next === null) break;
    t.equal(p.items.length, 7);
    before = p.next;
  }
  t.same(seen, live);
});

t.test('a parts cache far smaller than a page: every live match still shows', async (t) => {
  const f = await searchFixture(t);
  const ids = await indexed(f, BOB, Array.from({ length: 30 }, (_, i) => `gamma number ${i}`), 3000n);
  // Generations of 2 entries: hydrating a page retires several, including posts already known.
  const s = service(f, 2);
  const newest = [...ids].reverse();
  t.same(s.recent(match('gamma'), TOP, 10).items.map((i) => i.id), newest.slice(0, 10), 'the first page, whole');
  t.same(s.recent(match('gamma'), TOP, 25).items.map((i) => i.id), newest.slice(0, 25), 'known and new posts together');
  t.same(s.recent(match('gamma'), TOP, 30).items.map((i) => i.id), newest, 'every match');
});

t.test('relevance pages: best first, then newest; the pages are slices of one ranking while the index changes', async (t) => {
  const f = await searchFixture(t);
  const texts: string[] = [];
  for (let i = 0; i < 30; i++) texts.push(`${'beta '.repeat(1 + (i % 4))}filler words ${'x'.repeat(i % 3)} ${i}`);
  const ids = await indexed(f, ALICE, texts, 2000n);
  const s = service(f);
  const whole = s.relevance(match('beta'), null, 100);
  t.equal(whole.items.length, 30);
  t.equal(whole.next, null);
  t.same(whole.items.map((i) => i.id), f.engine.store.relevant(match('beta')!, 100).map(String), 'the engine\'s ranking');
  // BM25 ranks by how often the word occurs against the post's length: four times first.
  t.ok(whole.items.slice(0, 7).every((i) => i.text.startsWith('beta beta beta beta ')));
  t.same(whole.items.slice(0, 3).map((i) => i.id), ['2027', '2015', '2003'], 'the shortest of them (no x word) first, equal scores newest first');

  const seen: string[] = [];
  let position: RelevancePosition | null = null;
  for (let page = 0; page < 20; page++) {
    const p = s.relevance(match('beta'), position, 4);
    seen.push(...p.items.map((i) => i.id));
    if (page === 0) {
      // Between pages the index changes: a better match arrives and a post is deleted. Every
      // score moves; the pages still follow the first page's ranking.
      await indexed(f, ALICE, ['beta beta beta beta beta beta beta'], 9000n);
      f.remove(ALICE, ids[5]);
    }
    if (p.next === null) break;
    t.equal(p.items.length, 4);
    position = p.next;
  }
  t.same(seen, whole.items.map((i) => i.id).filter((id) => id !== ids[5]), 'nothing twice, nothing missed, the deleted post skipped');
  t.equal(s.relevance(match('beta'), null, 1).items[0].id, '9000', 'a new search sees the new post');

  // A cursor whose ranking expired is served from a fresh ranking at the same offset.
  const first = s.relevance(match('beta'), null, 2);
  const later = s.relevance(match('beta'), first.next, 2, Date.now() + SNAPSHOT_TTL_MS + 1);
  t.equal(later.items.length, 2);
  t.same(later.items.map((i) => i.id), s.relevance(match('beta'), null, 4).items.slice(2).map((i) => i.id));
});

t.test('hostile query text never reaches FTS5 as syntax', async (t) => {
  const f = await searchFixture(t);
  await indexed(f, ALICE, ['near the and gate, or not', 'column text: value', 'a "quoted" word'], 3000n);
  const s = service(f);
  const hostile = [
    '"', '""', '"unterminated', 'AND', 'OR', 'NOT', 'NEAR', 'NEAR(a b, 3)', 'a AND', 'OR b', 'NOT NOT', '*', 'a*', '^a', '^',
    'text:value', 'text : value', '{text}: value', '-text:value', '(', ')', '(a OR b', 'a) AND (b', '+', '-', ':', ',', '.', '\\',
    "'", ';DROP TABLE posts;--', '%', '_', 'null', '\u0000', 'a\u0000b', '🙂', '\u200b', '\u0301', 'e\u0301', 'ﬁ', '東京', '₂', 'near/3',
  ];
  for (const q of hostile) {
    const c = checkSearchQuery(q);
    if (!c.ok) continue;
    const m = ftsMatchExpression(c.terms);
    t.doesNotThrow(() => s.recent(m, TOP, 20), `recent ${JSON.stringify(q)}`);
    t.doesNotThrow(() => s.relevance(m, null, 20), `relevance ${JSON.stringify(q)}`);
  }
  t.same(s.recent(match('NEAR AND gate'), TOP, 20).items.map((i) => i.id), ['3000'], 'operator words are plain words');
  t.same(s.recent(match('text:value'), TOP, 20).items.map((i) => i.id), ['3001'], 'no column filter');
  t.same(s.recent(match('"quoted"'), TOP, 20).items.map((i) => i.id), ['3002']);
  // Random strings over the characters FTS5's grammar uses, and some words.
  const pieces = ['"', '(', ')', '*', '^', ':', '+', '-', ' ', 'AND', 'OR', 'NOT', 'NEAR', 'near', 'text', 'gate', ',', '{', '}', '\u0000', 'é', '.'];
  const rand = seededInts(42);
  let answered = 0;
  for (let i = 0; i < 500; i++) {
    let q = '';
    for (let k = 0, n = 1 + rand(12); k < n; k++) q += pieces[rand(pieces.length)];
    const c = checkSearchQuery(q);
    if (!c.ok) continue;
    const m = ftsMatchExpression(c.terms);
    s.recent(m, TOP, 5);
    s.relevance(m, null, 5);
    answered++;
  }
  t.ok(answered > 400, `${answered} random queries answered`);
});
