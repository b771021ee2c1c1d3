// The web addresses in a post's text, so that the post can show them as links. Pure.

/** A run of a post's text: plain, or a web address (`url`, the same characters as `text`). */
export interface TextPart {
  text: string;
  url?: string;
}

/**
 * http(s) addresses, up to white space, a character that cannot stand unescaped in one, or an
 * invisible format character (a right-to-left override would make the link's text read otherwise
 * than where it leads).
 */
const ADDRESS = /\bhttps?:\/\/[^\s<>"'`\p{Cf}]+/giu;
/** What ends a sentence around an address rather than the address itself. */
const TRAILING = /[.,;:!?'"*_]+$/;

/**
 * Where an address written in running text ends: punctuation after it belongs to the sentence
 * ("see https://perch.example/x."), and so does a closing bracket that has no opening one inside
 * the address ("(https://perch.example/x)"), while https://en.wikipedia.org/wiki/Perch_(fish)
 * keeps its own.
 */
function addressEnd(candidate: string): number {
  let end = candidate.length;
  for (;;) {
    const before = end;
    const trimmed = candidate.slice(0, end).replace(TRAILING, '');
    end = trimmed.length;
    const last = trimmed[end - 1];
    const open = last === ')' ? '(' : last === ']' ? '[' : last === '}' ? '{' : null;
    if (open !== null && count(trimmed, last) > count(trimmed, open)) end--;
    if (end === before) return end;
  }
}

function count(s: string, c: string): number {
  let n = 0;
  for (const x of s) if (x === c) n++;
  return n;
}

/** The text as plain runs and addresses, in order; joined, the parts are the text. */
export function textParts(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let at = 0;
  for (const m of text.matchAll(ADDRESS)) {
    const start = m.index!;
    const end = start + addressEnd(m[0]);
    // "https://" alone is not an address.
    if (end - start <= m[0].indexOf('//') + 2) continue;
    const url = text.slice(start, end);
    // An address with credentials before its host ("https://bank.example@evil.example/") reads as
    // one site and leads to another: left as text.
    if (url.slice(url.indexOf('//') + 2).split(/[/?#]/, 1)[0].includes('@')) continue;
    if (start > at) parts.push({ text: text.slice(at, start) });
    parts.push({ text: url, url });
    at = end;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}
