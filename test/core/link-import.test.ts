import t from 'tap';
import { importTime, ImportFileError, jsonValues, parseImport } from '../../src/core/link-import';

t.test('importTime: zones, no zone as UTC, dates alone, malformed', async (t) => {
  t.equal(importTime('2024-01-15T08:30:00.000Z'), Date.UTC(2024, 0, 15, 8, 30));
  t.equal(importTime('2021-08-21T20:34:16+02:00'), Date.UTC(2021, 7, 21, 18, 34, 16));
  t.equal(importTime('2021-08-21T20:34:16+0200'), Date.UTC(2021, 7, 21, 18, 34, 16));
  t.equal(importTime('2009-08-30 16:34:41'), Date.UTC(2009, 7, 30, 16, 34, 41));
  t.equal(importTime('2009-08-30T16:34'), Date.UTC(2009, 7, 30, 16, 34));
  t.equal(importTime('2024-05-01'), Date.UTC(2024, 4, 1));
  t.equal(importTime(''), undefined);
  t.equal(importTime(null), undefined);
  for (const bad of ['2021-13-45 99:00:00', '2024-02-31', 'yesterday', 1700000000]) t.ok(Number.isNaN(importTime(bad)), String(bad));
});

t.test('jsonValues: one value, several in a row, with or without space', async (t) => {
  t.same(jsonValues('{"a":1}'), [{ a: 1 }]);
  t.same(jsonValues('{"a":"}"}\n{"b":[1,{"c":"]"}]}{"d":2}'), [{ a: '}' }, { b: [1, { c: ']' }] }, { d: 2 }]);
  t.same(jsonValues(' [1,2] "s\\"x" '), [[1, 2], 's"x']);
  t.throws(() => jsonValues('{"a":1} {oops}'), /not JSON at character 8/);
  t.ok(new ImportFileError('x') instanceof Error);
});

t.test('kutt: an array of pages reads like pages in a row; a page of another shape is refused', async (t) => {
  const page = (address: string) => ({ data: [{ id: address, address, target: `https://example.com/${address}`, visit_count: '3', created_at: '2024-01-01T00:00:00Z' }] });
  const entries = parseImport('kutt', JSON.stringify([page('one'), page('two')]));
  t.same(entries.map((e) => [e.code, e.url, e.visits, e.createdMs]), [
    ['one', 'https://example.com/one', 3, Date.UTC(2024, 0, 1)],
    ['two', 'https://example.com/two', 3, Date.UTC(2024, 0, 1)],
  ]);
  t.throws(() => parseImport('kutt', '{"shortUrls":{"data":[]}}'), /not a Kutt links page/);
  t.throws(() => parseImport('shlink', '{"data":[]}'), /not a Shlink short-URLs page/);
  t.throws(() => parseImport('kutt', ''), /empty/);
  // More elements than a call takes as arguments: read one by one, not spread.
  const many = Array.from({ length: 300_000 }, (_, i) => page(`c${i}`));
  const read = parseImport('kutt', JSON.stringify(many));
  t.equal(read.length, 300_000, 'an array of 300,000 pages');
  t.equal(read[299_999].code, 'c299999');
  const flat = Array.from({ length: 130_000 }, (_, i) => ({ address: `x${i}`, target: `https://e.example/${i}` }));
  t.throws(() => parseImport('kutt', JSON.stringify(flat)), /not a Kutt links page/, 'a long array of entries, not pages, is refused as such');
});

t.test('csv: the url column is required; short_code reads as code (perch export)', async (t) => {
  t.throws(() => parseImport('csv', 'code,target\na,b'), /no url column/);
  const exported = 'short_code,short_url,url,created_at,expires_at,password_protected,clicks_total,clicks_bots\r\nabc,https://sho.rt/abc,https://example.com/,2024-01-01T00:00:00.000Z,,false,3,1\r\n';
  const [e] = parseImport('csv', exported);
  t.same([e.code, e.url, e.createdMs, e.expiresMs, e.skip], ['abc', 'https://example.com/', Date.UTC(2024, 0, 1), null, undefined]);
  t.match(parseImport('csv', 'url,expires_at\nhttps://a.example,never')[0].skip, /expires_at is not a date/);
  const guarded = parseImport('csv', exported.replace(',false,', ',true,'));
  t.equal(guarded[0].skip, 'protected by a password, which the export does not hold', 'a link that had a password is not opened to anyone');
});

t.test('yourls: without a header the columns are positional', async (t) => {
  const [e] = parseImport('yourls', 'abc,https://example.com/x,Title,2020-01-02 03:04:05,127.0.0.1,12\n');
  t.same([e.code, e.url, e.createdMs, e.visits], ['abc', 'https://example.com/x', Date.UTC(2020, 0, 2, 3, 4, 5), 12]);
});
