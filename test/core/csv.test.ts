import t from 'tap';
import { csvField, csvRow, CsvSyntaxError, parseCsv } from '../../src/core/csv';

t.test('fields are quoted only when they must be, quotes doubled', async (t) => {
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField(''), '');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('two\nlines'), '"two\nlines"');
  t.equal(csvField('cr\r'), '"cr\r"');
  t.equal(csvField('=1+2'), '=1+2', 'values are written as they are');
  t.equal(csvRow(['a', 'b,c', '']), 'a,"b,c",\r\n');
});

t.test('parseCsv reads what csvRow writes, and the usual variants', async (t) => {
  const rows = [['x', 'y,z', 'q"uote', 'multi\nline', ''], ['1', '2', '3', '4', '5']];
  t.same(parseCsv(rows.map(csvRow).join('')).map((r) => r.fields), rows);
  t.same(parseCsv('\ufeffa,b\nc,d\n'), [{ line: 1, fields: ['a', 'b'] }, { line: 2, fields: ['c', 'd'] }], 'BOM, LF');
  t.same(parseCsv('a\r\n\r\nb'), [{ line: 1, fields: ['a'] }, { line: 3, fields: ['b'] }], 'blank lines skipped, lines counted');
  t.same(parseCsv('"a\nb",c\nd,e').map((r) => r.line), [1, 3], 'a record starts where it starts');
  t.same(parseCsv('url,code\rhttps://cr.example/1,cr1\rnot a url,cr2\r'), [
    { line: 1, fields: ['url', 'code'] },
    { line: 2, fields: ['https://cr.example/1', 'cr1'] },
    { line: 3, fields: ['not a url', 'cr2'] },
  ], 'CR alone ends a line too (old Mac exports), counted as one');
  t.same(parseCsv('"a\rb",c\rd\r\n\re').map((r) => r.line), [1, 3, 5], 'in a quoted field and mixed with CR LF');
  t.same(parseCsv('a,,b').map((r) => r.fields), [['a', '', 'b']]);
  t.throws(() => parseCsv('"open'), /line 1: a quoted field is not closed/);
  t.ok(new CsvSyntaxError('x', 3) instanceof Error);
  t.throws(() => parseCsv('"a"b,c'), /line 1: text after a closing quote/);
});
