import t from 'tap';
import { aliasProblem, CODE_ALPHABET, generateCode, generateCodes, isCodeShaped, isReservedCode } from '../../src/core/short-code';

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
  // A byte stream that spells 'media', then 'xxxxx': the first is skipped, the second taken.
  const stream = [...'mediaxxxxx'].map((ch) => CODE_ALPHABET.indexOf(ch));
  const random = (n: number) => {
    const taken = stream.splice(0, n);
    return Uint8Array.from(taken.concat(Array(n - taken.length).fill(0)));
  };
  t.same(generateCodes(1, 5, random), ['xxxxx']);
});

t.test('generateCodes draws random bytes in bulk, skipping bytes >= 248 across draws', async (t) => {
  const sizes: number[] = [];
  // Every other byte is rejected; the accepted ones walk the alphabet.
  let next = 0;
  const random = (n: number) => {
    sizes.push(n);
    return Uint8Array.from({ length: n }, (_, i) => (i % 2 === 1 ? 250 : next++ % 62));
  };
  // (The accepted characters repeat every 62, so at most 31 distinct 4-character codes exist here.)
  const codes = generateCodes(20, 4, random);
  t.equal(codes.length, 20);
  t.same(codes.slice(0, 3), ['0123', '4567', '89AB']);
  t.ok(codes.every((c) => /^[0-9A-Za-z]{4}$/.test(c)));
  // 88 bytes (20 codes × 4 characters × 1.1) yield 11 codes here, then 64-byte draws for the rest.
  t.same(sizes, [88, 64, 64]);
});

t.test('isCodeShaped: pool codes and aliases, 3-64 of [A-Za-z0-9_-]', async (t) => {
  t.ok(isCodeShaped('abcD123'));
  t.ok(isCodeShaped('abcd'));
  t.ok(isCodeShaped('abc'));
  t.ok(isCodeShaped('abc-def_GH'));
  t.ok(isCodeShaped('a'.repeat(64)));
  t.notOk(isCodeShaped('ab'));
  t.notOk(isCodeShaped('a'.repeat(65)));
  t.notOk(isCodeShaped('favicon.ico'));
  t.notOk(isCodeShaped('ab%20cd'));
  t.notOk(isCodeShaped('abc def'));
  t.notOk(isCodeShaped('café'));
});

t.test('aliasProblem: length, alphabet, reserved paths in any case', async (t) => {
  t.equal(aliasProblem('my-link_2024'), undefined);
  t.equal(aliasProblem('abc'), undefined);
  t.equal(aliasProblem('A'.repeat(64)), undefined);
  t.equal(aliasProblem('ab'), 'must be 3 to 64 characters');
  t.equal(aliasProblem('A'.repeat(65)), 'must be 3 to 64 characters');
  t.equal(aliasProblem('has space'), 'may contain only A-Z, a-z, 0-9, _ and -');
  t.equal(aliasProblem('dot.ted'), 'may contain only A-Z, a-z, 0-9, _ and -');
  t.equal(aliasProblem('ünï'), 'may contain only A-Z, a-z, 0-9, _ and -');
  for (const reserved of ['api', 'API', 'app', 'Assets', 'media', 'healthz', 'readyz', 'METRICS', 'export', 'Bulk', 'BULK']) {
    t.equal(aliasProblem(reserved), `"${reserved}" is reserved`, reserved);
  }
  t.equal(aliasProblem('apis'), undefined, 'only the paths themselves');
});
