// Search text from users: how a query is normalised (for counting and for suggestion prefixes),
// and how its words become an FTS5 MATCH expression in which nothing the user typed can act as
// FTS5 syntax. Pure.
import { codePointLength } from './post-text';

/** The longest query accepted, in code points after normalisation (suggestion keys stay small). */
export const MAX_QUERY_CHARS = 256;
/** The most distinct words a query may have: each one is a phrase the engine has to intersect. */
export const MAX_QUERY_TERMS = 32;
/** The longest suggestion prefix, in code points after normalisation (the contract's bound). */
export const MAX_PREFIX_CHARS = 100;

const WHITE_SPACE_RUN = /\p{White_Space}+/gu;

/**
 * The contract's normal form of a query or a prefix: NFKC, lower case, no white space at either
 * end, and every run of white space inside one ASCII space. Case is folded after NFKC because
 * compatibility mappings can produce capitals (U+2160 ROMAN NUMERAL ONE becomes "I").
 */
export function normalizeQuery(raw: string): string {
  return raw.normalize('NFKC').toLowerCase().replace(WHITE_SPACE_RUN, ' ').trim();
}

/** Anything outside ASCII: a text without it is its own search form. */
const NON_ASCII = /[^\x00-\x7f]/;
const SHARP_S = /[ßẞ]/g;
const sharpS = (c: string) => (c === 'ß' ? 'ss' : 'SS');

/**
 * The form in which a text is indexed and a query's words are matched: NFKC, so that the
 * compatibility forms of letters (fullwidth Ｆｕｌｌ, the ligature ﬁ, superscripts) are the letters
 * a query's normal form has; and ß (or ẞ) as "ss", the full case folding that the tokenizer's
 * simple one lacks, so that "Straße" and "strasse" are one word. Case and diacritics the tokenizer
 * folds itself. ASCII text is returned as it is.
 */
export function searchForm(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.normalize('NFKC').replace(SHARP_S, sharpS);
}

/**
 * Characters that make up words for the index's tokenizer (unicode61): letters, numbers and
 * private-use characters; every other character separates words. Combining marks stay inside a
 * word so that a decomposed accent does not split it (the tokenizer folds diacritics anyway).
 */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/**
 * The distinct words of a query, in order of first appearance. Punctuation, quotes, `*`, `^`,
 * `:`, parentheses and the like only separate words; AND, OR, NOT and NEAR are words like any
 * other. A query of nothing but separators has no words.
 */
export function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const m of query.matchAll(WORD)) seen.add(m[0]);
  return [...seen];
}

/**
 * The MATCH expression that requires every term: each term as an FTS5 string (double quotes; a
 * term never contains one, since `"` separates words), joined by spaces, which FTS5 reads as AND.
 * Inside a string FTS5 applies no operator, so `"near"` or `"or"` is just that word. Returns null
 * for no terms: such a query matches nothing and the engine is not asked.
 */
export function ftsMatchExpression(terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  let out = '';
  for (const term of terms) out += (out ? ' "' : '"') + term.replace(/"/g, '""') + '"';
  return out;
}

export type QueryCheck = { ok: true; query: string; terms: string[] } | { ok: false; message: string };

/** Normalises `q` of GET /api/search and checks it: not empty, not too long, not too many words. */
export function checkSearchQuery(raw: string | null): QueryCheck {
  if (raw === null) return { ok: false, message: 'is required' };
  const query = normalizeQuery(raw);
  if (query.length === 0) return { ok: false, message: 'must contain something other than white space' };
  const length = codePointLength(query);
  if (length > MAX_QUERY_CHARS) return { ok: false, message: `is ${length} characters long; the limit is ${MAX_QUERY_CHARS}` };
  const terms = queryTerms(searchForm(query));
  if (terms.length > MAX_QUERY_TERMS) return { ok: false, message: `has ${terms.length} distinct words; the limit is ${MAX_QUERY_TERMS}` };
  return { ok: true, query, terms };
}

/** Normalises `prefix` of GET /api/suggest and checks it: 1 to MAX_PREFIX_CHARS code points. */
export function checkSuggestPrefix(raw: string | null): { ok: true; prefix: string } | { ok: false; message: string } {
  const prefix = normalizeQuery(raw ?? '');
  if (prefix.length === 0) return { ok: false, message: 'must not be empty (after normalisation)' };
  const length = codePointLength(prefix);
  if (length > MAX_PREFIX_CHARS) return { ok: false, message: `is ${length} characters long; the limit is ${MAX_PREFIX_CHARS}` };
  return { ok: true, prefix };
}
