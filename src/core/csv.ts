// CSV as RFC 4180 has it: fields separated by commas, records by CRLF (LF accepted on input), a
// field quoted with double quotes when it holds a comma, a quote or a line break, and a quote
// inside a quoted field doubled. Values are written as they are: the export is meant to be read
// back (perch import csv, other shorteners' importers), so nothing is prefixed or altered.

/** One field, quoted when it has to be. */
export function csvField(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 44 /* , */ || c === 34 /* " */ || c === 10 || c === 13) return '"' + value.replace(/"/g, '""') + '"';
  }
  return value;
}

/** One record, CRLF-terminated. */
export function csvRow(values: readonly string[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ',') + csvField(values[i]);
  return line + '\r\n';
}

export class CsvSyntaxError extends Error {
  constructor(message: string, readonly line: number) {
    super(`line ${line}: ${message}`);
  }
}

/**
 * Parses CSV text into records of fields. A byte-order mark is dropped; a trailing line break
 * makes no empty record; blank lines are skipped. `line` of each record is where it starts
 * (1-based), for messages about it. Throws CsvSyntaxError for an unterminated quote or text after
 * a closing quote.
 */
export function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  const out: Array<{ line: number; fields: string[] }> = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let value = '';
      if (text.charCodeAt(i) === 34) {
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError('a quoted field is not closed', start);
          const c = text.charCodeAt(i);
          if (c === 34) {
            if (text.charCodeAt(i + 1) === 34) {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          // A line break is LF, CR LF, or CR alone (old Mac exports).
          if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) line++;
          value += text[i++];
        }
        const next = text.charCodeAt(i);
        if (i < n && next !== 44 && next !== 10 && next !== 13) throw new CsvSyntaxError('text after a closing quote', line);
      } else {
        const from = i;
        while (i < n) {
          const c = text.charCodeAt(i);
          if (c === 44 || c === 10 || c === 13) break;
          i++;
        }
        value = text.slice(from, i);
      }
      fields.push(value);
      if (i < n && text.charCodeAt(i) === 44) {
        i++;
        continue;
      }
      break;
    }
    const cr = text.charCodeAt(i) === 13;
    if (cr) i++;
    const lf = text.charCodeAt(i) === 10;
    if (lf) i++;
    if (cr || lf) line++;
    if (!(fields.length === 1 && fields[0] === '')) out.push({ line: start, fields });
  }
  return out;
}
