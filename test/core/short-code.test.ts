import t from 'tap';
import { CODE_ALPHABET, generateCode, generateCodes, isCodeShaped, isReservedCode } from '../../src/core/short-code';

t.test('the alphabet is [0-9A-Za-z]', async (t) => {
  t.equal(CODE_ALPHABET.length, 62);
  t.equal(CODE_ALPHABET, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
});

t.test('generateCode maps bytes without modulo bias and skips bytes >= 248', async (t) => {
  const bytes = [0, 9, 10, 35, 36, 61, 62, 247, 248, 255, 123, 1, 2, 3];
  const random = (n: number) => Uint8Array.from(bytes.splice(0, n));
  // 0→'0', 9→'9', 10→'A', 35→'Z', 36→'a', 61→'z', 62→'0', 247→'z'; 248 and 255 skipped.
  t.equal(generateCode(7, random), '09AZaz0');
  const fixed = () => Uint8Array.from([250, 251, 252, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]);
  t.equal(generateCode(4, fixed), '5555');
});

t.test('generated codes have the configured length and alphabet', async (t) => {
  for (const len of [4, 7, 12]) {
    const codes = generateCodes(500, len);
    t.equal(new Set(codes).size, 500, 'distinct');
    for (const c of codes) t.ok(c.length === len && /^[0-9A-Za-z]+$/.test(c));
  }
});

t.test('reserved paths are never codes', async (t) => {
  for (const r of ['api', 'ws', 'app', 'assets', 'media', 'healthz', 'readyz', 'metrics', 'favicon.ico', 'robots.txt', '', 'API', 'Media']) {
    t.ok(isReservedCode(r), r);
  }
  t.notOk(isReservedCode('abc1234'));
  // A generator that can only produce 'media' (then 'x' characters) never yields it.
  let calls = 0;
  const random = (n: number) => {
    calls++;
    const word = calls === 1 ? 'media' : 'xxxxx';
    return Uint8Array.from([...word].map((ch) => CODE_ALPHABET.indexOf(ch)).concat(Array(Math.max(0, n - 5)).fill(0)));
  };
  t.same(generateCodes(1, 5, random), ['xxxxx']);
});

t.test('isCodeShaped', async (t) => {
  t.ok(isCodeShaped('abcD123'));
  t.ok(isCodeShaped('abcd'));
  t.notOk(isCodeShaped('abc'));
  t.notOk(isCodeShaped('a'.repeat(33)));
  t.notOk(isCodeShaped('favicon.ico'));
  t.notOk(isCodeShaped('ab%20cd'));
  t.notOk(isCodeShaped('abc-def'));
});
