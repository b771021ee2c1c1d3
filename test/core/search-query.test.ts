import t from 'tap';
import {
  MAX_PREFIX_CHARS,
  MAX_QUERY_CHARS,
  MAX_QUERY_TERMS,
  checkSearchQuery,
  checkSuggestPrefix,
  ftsMatchExpression,
  normalizeQuery,
  queryTerms,
  searchForm,
} from '../../src/core/search-query';

t.test('normalisation: NFKC, lower case, trimmed, inner white space collapsed', async (t) => {
  t.equal(normalizeQuery('  Hello   World  '), 'hello world');
  t.equal(normalizeQuery('\tCafé\u00a0\u2003au\nLAIT\r\n'), 'café au lait', 'tabs, no-break and em spaces, newlines');
  t.equal(normalizeQuery('Ｃａｆｅ'), 'cafe', 'full-width letters fold to ASCII (NFKC)');
  t.equal(normalizeQuery('ﬁle'), 'file', 'the fi ligature decomposes');
  t.equal(normalizeQuery('\u2160'), 'i', 'ROMAN NUMERAL ONE becomes I by NFKC, then i');
  t.equal(normalizeQuery('e\u0301'), 'é', 'a decomposed accent composes');
  t.equal(normalizeQuery('   '), '');
  t.equal(normalizeQuery(''), '');
});

t.test('terms: words as the tokenizer sees them, distinct, in order', async (t) => {
  t.same(queryTerms('hello world hello'), ['hello', 'world']);
  t.same(queryTerms('"quoted" AND (this OR that) NOT near*'), ['quoted', 'AND', 'this', 'OR', 'that', 'NOT', 'near']);
  t.same(queryTerms('text:foo ^bar -baz +qux'), ['text', 'foo', 'bar', 'baz', 'qux']);
  t.same(queryTerms('foo-bar_baz'), ['foo', 'bar', 'baz'], 'hyphen and underscore separate words');
  t.same(queryTerms("don't"), ['don', 't']);
  t.same(queryTerms('!!! *** ""'), []);
  t.same(queryTerms('naïve 東京 2026'), ['naïve', '東京', '2026']);
  t.same(queryTerms('🙂 cat'), ['cat'], 'emoji are separators');
});

t.test('the MATCH expression quotes every term, so none is syntax', async (t) => {
  t.equal(ftsMatchExpression(['hello', 'world']), '"hello" "world"');
  t.equal(ftsMatchExpression(['AND', 'NEAR']), '"AND" "NEAR"');
  t.equal(ftsMatchExpression(['a"b']), '"a""b"', 'a double quote would be doubled');
  t.equal(ftsMatchExpression([]), null);
});

t.test('checkSearchQuery', async (t) => {
  t.same(checkSearchQuery(null), { ok: false, message: 'is required' });
  t.same(checkSearchQuery('  \n '), { ok: false, message: 'must contain something other than white space' });
  t.same(checkSearchQuery(' Hello  WORLD '), { ok: true, query: 'hello world', terms: ['hello', 'world'] });
  t.same(checkSearchQuery('???'), { ok: true, query: '???', terms: [] }, 'no words is not an error');
  t.equal(checkSearchQuery('x'.repeat(MAX_QUERY_CHARS)).ok, true);
  t.same(checkSearchQuery('x'.repeat(MAX_QUERY_CHARS + 1)), { ok: false, message: `is ${MAX_QUERY_CHARS + 1} characters long; the limit is ${MAX_QUERY_CHARS}` });
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  t.equal(checkSearchQuery(words(MAX_QUERY_TERMS)).ok, true);
  t.same(checkSearchQuery(words(MAX_QUERY_TERMS + 1)), { ok: false, message: `has ${MAX_QUERY_TERMS + 1} distinct words; the limit is ${MAX_QUERY_TERMS}` });
});

t.test('the search form: compatibility forms as their letters, ß as ss; ASCII as it is', async (t) => {
  t.equal(searchForm('Ｆｕｌｌ width'), 'Full width', 'fullwidth letters');
  t.equal(searchForm('ﬁne ﬂow'), 'fine flow', 'ligatures');
  t.equal(searchForm('x² ½'), 'x2 1⁄2', 'superscripts and fractions');
  t.equal(searchForm('Straße STRAẞE'), 'Strasse STRASSE', 'sharp s, small and capital');
  t.equal(searchForm('Café naïve'), 'Café naïve', 'diacritics stay (the tokenizer folds them)');
  const ascii = 'plain ASCII text, 100% of it';
  t.equal(searchForm(ascii), ascii);
  t.same(checkSearchQuery('ＦＵＬＬ straße'), { ok: true, query: 'full straße', terms: ['full', 'strasse'] }, 'query terms in the same form; the query itself keeps ß');
});

t.test('checkSuggestPrefix', async (t) => {
  t.same(checkSuggestPrefix(' Ca'), { ok: true, prefix: 'ca' });
  t.same(checkSuggestPrefix(null), { ok: false, message: 'must not be empty (after normalisation)' });
  t.same(checkSuggestPrefix('\u3000'), { ok: false, message: 'must not be empty (after normalisation)' });
  t.same(checkSuggestPrefix('é'.repeat(MAX_PREFIX_CHARS)), { ok: true, prefix: 'é'.repeat(MAX_PREFIX_CHARS) });
  t.same(checkSuggestPrefix('😀'.repeat(MAX_PREFIX_CHARS + 1)), { ok: false, message: 'is 101 characters long; the limit is 100' }, 'code points, not UTF-16 units');
});
