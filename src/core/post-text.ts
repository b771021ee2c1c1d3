// Post text rules: NFC-normalised, 1–280 Unicode code points, not only white space or other
// characters that show nothing (ONLY_INVISIBLE).
// Pure: the HTTP layer turns a failure into a 400 naming the `text` field.

export const MAX_POST_CODE_POINTS = 280;

/** Code points of a string (a surrogate pair counts once). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

const ONLY_WHITE_SPACE = /^\p{White_Space}*$/u;
/**
 * Control (Cc) and format (Cf: zero-width space and joiners, bidi marks, BOM) characters show
 * nothing by themselves, nor do the default-ignorable ones (variation selectors, the combining
 * grapheme joiner, the Hangul fillers) and the blank Braille pattern: a post of only these and
 * white space looks empty, and a NUL alone is not text any client can show.
 */
const ONLY_INVISIBLE = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]*$/u;
/** Whether a (normalised) text shows nothing: the server refuses it as a post. */
export function showsNothing(text: string): boolean {
  return ONLY_INVISIBLE.test(text);
}

/** A surrogate that is not half of a pair (JSON can carry one as `\ud800`): not Unicode text. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The first code point that NFC can change: below it no character is a surrogate, none combines
 * with its neighbour, and each one's NFC form is itself (the unit test checks every one and every
 * pair). A text of only such characters, as most posts are, is its own NFC form and as long in
 * code points as in UTF-16 units, which a scan finds out for half of what normalising costs.
 */
const FIRST_CHANGED_BY_NFC = 0x300;

/** True when every UTF-16 unit of `s` is below FIRST_CHANGED_BY_NFC. */
function isOwnNfc(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= FIRST_CHANGED_BY_NFC) return false;
  return true;
}

export type PostTextResult = { ok: true; text: string } | { ok: false; message: string };

/** Normalises post text and checks its length; the stored form is the returned `text`. */
export function normalizePostText(raw: string): PostTextResult {
  const plain = isOwnNfc(raw);
  // Stored as UTF-8, such a string would come back with U+FFFD in its place, differing from the
  // text the 201 confirmed and, three bytes each, possibly longer than the limit.
  if (!plain && LONE_SURROGATE.test(raw)) return { ok: false, message: 'text is not valid Unicode: it has an unpaired surrogate' };
  const text = plain ? raw : raw.normalize('NFC');
  if (ONLY_WHITE_SPACE.test(text)) return { ok: false, message: 'text must contain something other than white space' };
  if (ONLY_INVISIBLE.test(text)) return { ok: false, message: 'text must contain something visible, not only white space and invisible characters' };
  const length = plain ? text.length : codePointLength(text);
  if (length > MAX_POST_CODE_POINTS) {
    return { ok: false, message: `text is ${length} characters long; the limit is ${MAX_POST_CODE_POINTS}` };
  }
  return { ok: true, text };
}
