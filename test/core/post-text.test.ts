import t from 'tap';
import { codePointLength, normalizePostText, MAX_POST_CODE_POINTS } from '../../src/core/post-text';

t.test('codePointLength counts code points, not UTF-16 units', async (t) => {
  t.equal(codePointLength(''), 0);
  t.equal(codePointLength('abc'), 3);
  t.equal(codePointLength('😀'), 1);
  t.equal('😀'.length, 2);
  t.equal(codePointLength('a😀b'), 3);
  t.equal(codePointLength('\ud800'), 1, 'a lone surrogate is one code point');
});

t.test('text is NFC-normalised before counting and stored normalised', async (t) => {
  const decomposed = 'e\u0301'; // e + combining acute
  t.same(normalizePostText(decomposed), { ok: true, text: '\u00e9' });
  const long = decomposed.repeat(280); // 560 code points before NFC, 280 after
  const r = normalizePostText(long);
  t.equal(r.ok, true);
  if (r.ok) t.equal(codePointLength(r.text), 280);
});

t.test('280 code points pass, 281 fail', async (t) => {
  t.equal(MAX_POST_CODE_POINTS, 280);
  t.same(normalizePostText('😀'.repeat(280)), { ok: true, text: '😀'.repeat(280) });
  t.same(normalizePostText('x'.repeat(281)), { ok: false, message: 'text is 281 characters long; the limit is 280' });
});

t.test('empty or white-space-only text is refused', async (t) => {
  const samples = ['', ' ', '\n\t', '\u00a0', '\u3000\u2003', '\u2028'];
  samples.forEach((s, i) => {
    // The message names the sample by index: a line separator would break the TAP stream.
    t.same(normalizePostText(s), { ok: false, message: 'text must contain something other than white space' }, `sample ${i}`);
  });
  t.same(normalizePostText(' a '), { ok: true, text: ' a ' });
});

t.test('text with an unpaired surrogate is refused, a pair is not', async (t) => {
  const refused = { ok: false, message: 'text is not valid Unicode: it has an unpaired surrogate' };
  for (const s of ['\ud800', '\udc00', 'a\ud83d', '\ude00\ud83d', '\udc00'.repeat(280)]) t.same(normalizePostText(s), refused, JSON.stringify(s));
  t.same(normalizePostText('\ud83d\ude00'), { ok: true, text: '😀' });
});

t.test('text made only of control or format characters (and white space) is refused', async (t) => {
  const refused = { ok: false, message: 'text must contain something visible, not only white space and invisible characters' };
  const samples = ['\u0000', '\u0000\u0001\u001f', '\u007f', '\u0085\u0000', ' \u0000 ', '\u200b', '\u200d\u200c', '\ufeff', '\u00ad', '\u2060\n', '\u202e\u0008'];
  samples.forEach((s, i) => t.same(normalizePostText(s), refused, `sample ${i}`));
  // Control characters alongside anything else are kept as sent: the rule is about empty-looking posts.
  t.same(normalizePostText('a\u0000'), { ok: true, text: 'a\u0000' });
  t.same(normalizePostText('\u200bhi'), { ok: true, text: '\u200bhi' });
  t.same(normalizePostText('👩\u200d💻'), { ok: true, text: '👩\u200d💻' }, 'a ZWJ sequence is text');
});

t.test('text made only of characters that show nothing (fillers, selectors, the blank Braille pattern) is refused', async (t) => {
  const refused = { ok: false, message: 'text must contain something visible, not only white space and invisible characters' };
  for (const s of ['\u3164', '\u115f', '\u1160', '\uffa0', '\u2800', '\u034f', '\ufe0f', '\u3164 \u2800', '\u{e0041}']) {
    t.same(normalizePostText(s), refused, JSON.stringify(s));
  }
  t.same(normalizePostText('\u2764\ufe0f'), { ok: true, text: '\u2764\ufe0f' }, 'a selector after a character is kept');
  t.same(normalizePostText('\u3164x'), { ok: true, text: '\u3164x' });
});

t.test('below U+0300 every character and every pair is its own NFC form, as the fast path assumes', async (t) => {
  let changed = 0;
  for (let a = 0; a < 0x300; a++) {
    const one = String.fromCharCode(a);
    if (one.normalize('NFC') !== one) changed++;
    for (let b = 0; b < 0x300; b++) {
      const two = one + String.fromCharCode(b);
      if (two.normalize('NFC') !== two) changed++;
    }
  }
  t.equal(changed, 0);
  // U+0300 itself is the first that combines: it is where the fast path must stop.
  t.equal('e\u0300'.normalize('NFC'), '\u00e8');
});

t.test('a text below U+0300 is kept as sent and counted by its length', async (t) => {
  const latin = 'Ça coûte 5 ¤ ? Non: 5 £, déjà payé. ǅ ɐ ˥';
  t.same(normalizePostText(latin), { ok: true, text: latin });
  t.same(normalizePostText('é'.repeat(280)), { ok: true, text: 'é'.repeat(280) });
  t.same(normalizePostText('é'.repeat(281)), { ok: false, message: 'text is 281 characters long; the limit is 280' });
  t.same(normalizePostText('\u0000\u00ad '), { ok: false, message: 'text must contain something visible, not only white space and invisible characters' });
  t.same(normalizePostText('\u00a0\n'), { ok: false, message: 'text must contain something other than white space' });
});
