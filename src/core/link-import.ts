// Reading other shorteners' exports into link entries, pure: what `perch import` takes from each
// format (CONTRACT §4). Checks that need perch's state or configuration (is the code free, is the
// target allowed) are made by the importer (links/importer.ts); here only the file is read.
//   kutt    the JSON pages of Kutt's GET /api/v2/links: {"data": [{address, target, created_at,
//           expire_in, visit_count, password, banned, id}, ...]}
//   shlink  the JSON pages of Shlink's GET /rest/v3/short-urls: {"shortUrls": {"data": [{shortCode,
//           longUrl, dateCreated, meta: {validUntil}, visitsSummary: {total, nonBots, bots},
//           domain}, ...]}}
//   yourls  CSV of the yourls_url table: keyword,url,title,timestamp,ip,clicks (header optional)
//   csv     a header row naming url and optionally code, created_at, expires_at
// A JSON file may hold one page, several pages one after another (as saved from successive
// requests), or an array of pages.
import { createHash } from 'node:crypto';
import { parseCsv, CsvSyntaxError } from './csv';

export const IMPORT_FORMATS = ['kutt', 'shlink', 'yourls', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ImportEntry {
  /** Where the entry is in the file, for messages: `line 12` or `entry 3`. */
  where: string;
  /** The entry's identity in its source: a second run of the same file recognises it by this. */
  key: string;
  /** The code to keep, when the source has one. */
  code?: string;
  url: string;
  createdMs?: number;
  /** null: no expiry; may be in the past (the link is imported as expired). */
  expiresMs: number | null;
  /** Visits by people the source counted, and by bots where it tells them apart. */
  visits: number;
  botVisits: number;
  /** Why the entry cannot be imported, when the file alone says so. */
  skip?: string;
}

/** The file as a whole cannot be read in this format. */
export class ImportFileError extends Error {}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const NO_ZONE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?$/;
const WITH_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A time in an export: ISO 8601 with a zone, or without one (YOURLS writes `2024-01-15 10:22:33`;
 * a date alone is midnight), read as UTC. Undefined for an empty value, NaN for a malformed one.
 */
export function importTime(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return NaN;
  const s = value.trim();
  if (WITH_ZONE.test(s)) return Date.parse(s.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  let m = DATE_ONLY.exec(s);
  if (m) {
    const t = Date.UTC(+m[1], +m[2] - 1, +m[3]);
    return new Date(t).getUTCDate() === +m[3] ? t : NaN;
  }
  m = NO_ZONE.exec(s);
  if (m) {
    const ms = m[7] ? Math.round(Number(m[7]) * 1000) : 0;
    const t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], m[6] ? +m[6] : 0, ms);
    // Date.UTC rolls 2024-02-31 over into March; a date that does not exist is malformed.
    return new Date(t).getUTCDate() === +m[3] ? t : NaN;
  }
  return NaN;
}

function count(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

/**
 * The JSON values of a text holding one or more of them one after another (whitespace between or
 * not). Throws ImportFileError with the position of the first one that does not parse.
 */
export function jsonValues(text: string): unknown[] {
  const out: unknown[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) break;
    const start = i;
    let depth = 0;
    let inString = false;
    for (; i < n; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      } else if (depth === 0 && /\s/.test(c)) break;
    }
    const chunk = text.slice(start, i);
    try {
      out.push(JSON.parse(chunk));
    } catch (err) {
      throw new ImportFileError(`not JSON at character ${start}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** The pages of a JSON export: each value, or each element of a value that is an array. */
function pages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const v of jsonValues(text)) {
    // One element at a time: spread as arguments, an array of a few hundred thousand overflows the stack.
    if (Array.isArray(v)) for (const page of v) out.push(page);
    else out.push(v);
  }
  if (out.length === 0) throw new ImportFileError('the file is empty');
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dates(entry: ImportEntry, created: unknown, expires: unknown, createdName: string, expiresName: string): void {
  const c = importTime(created);
  if (Number.isNaN(c)) entry.skip ??= `${createdName} is not a date: ${JSON.stringify(created)}`;
  else entry.createdMs = c;
  const e = importTime(expires);
  if (Number.isNaN(e)) entry.skip ??= `${expiresName} is not a date: ${JSON.stringify(expires)}`;
  else entry.expiresMs = e ?? null;
}

function kutt(text: string): ImportEntry[] {
  const out: ImportEntry[] = [];
  for (const page of pages(text)) {
    if (!isObject(page) || !Array.isArray(page.data)) throw new ImportFileError('not a Kutt links page: expected {"data": [...]}');
    for (const link of page.data) {
      const where = `entry ${out.length + 1}`;
      if (!isObject(link)) {
        out.push({ where, key: where, url: '', expiresMs: null, visits: 0, botVisits: 0, skip: 'not a link object' });
        continue;
      }
      const code = str(link.address);
      const e: ImportEntry = {
        where: code ? `${where} (${code})` : where,
        key: str(link.id) ?? code ?? where,
        code,
        url: str(link.target) ?? '',
        expiresMs: null,
        visits: count(link.visit_count),
        botVisits: 0,
      };
      if (!code) e.skip = 'no address';
      else if (!e.url) e.skip = 'no target';
      if (link.password === true) e.skip ??= 'protected by a password in Kutt, which exports no password';
      if (link.banned === true) e.skip ??= 'banned in Kutt';
      dates(e, link.created_at, link.expire_in, 'created_at', 'expire_in');
      out.push(e);
    }
  }
  return out;
}

function shlink(text: string): ImportEntry[] {
  const out: ImportEntry[] = [];
  for (const page of pages(text)) {
    const list = isObject(page) && isObject(page.shortUrls) ? page.shortUrls.data : undefined;
    if (!Array.isArray(list)) throw new ImportFileError('not a Shlink short-URLs page: expected {"shortUrls": {"data": [...]}}');
    for (const link of list) {
      const where = `entry ${out.length + 1}`;
      if (!isObject(link)) {
        out.push({ where, key: where, url: '', expiresMs: null, visits: 0, botVisits: 0, skip: 'not a short-URL object' });
        continue;
      }
      const code = str(link.shortCode);
      const domain = str(link.domain) ?? '';
      const summary = isObject(link.visitsSummary) ? link.visitsSummary : undefined;
      // Shlink 3 counts bots apart (visitsSummary); older pages only have visitsCount.
      const people = summary ? (summary.nonBots !== undefined ? count(summary.nonBots) : count(summary.total)) : count(link.visitsCount);
      const e: ImportEntry = {
        where: code ? `${where} (${domain ? domain + '/' : ''}${code})` : where,
        key: `${domain}/${code ?? where}`,
        code,
        url: str(link.longUrl) ?? '',
        expiresMs: null,
        visits: people,
        botVisits: summary ? count(summary.bots) : 0,
      };
      if (!code) e.skip = 'no shortCode';
      else if (!e.url) e.skip = 'no longUrl';
      const meta = isObject(link.meta) ? link.meta : {};
      dates(e, link.dateCreated, meta.validUntil, 'dateCreated', 'meta.validUntil');
      out.push(e);
    }
  }
  return out;
}

function csvRecords(text: string): Array<{ line: number; fields: string[] }> {
  try {
    return parseCsv(text);
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw new ImportFileError(`not CSV: ${err.message}`);
    throw err;
  }
}

const YOURLS_COLUMNS = ['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks'];

function yourls(text: string): ImportEntry[] {
  const records = csvRecords(text);
  let columns = YOURLS_COLUMNS;
  if (records.length > 0 && records[0].fields[0].trim().toLowerCase() === 'keyword') {
    columns = records.shift()!.fields.map((f) => f.trim().toLowerCase());
    for (const need of ['keyword', 'url']) if (!columns.includes(need)) throw new ImportFileError(`the header row has no ${need} column`);
  }
  const col = (fields: string[], name: string) => {
    const i = columns.indexOf(name);
    return i === -1 ? undefined : fields[i];
  };
  return records.map(({ line, fields }) => {
    const code = col(fields, 'keyword')?.trim();
    const e: ImportEntry = {
      where: `line ${line}${code ? ` (${code})` : ''}`,
      key: code || `line ${line}`,
      code: code || undefined,
      url: col(fields, 'url')?.trim() ?? '',
      expiresMs: null,
      visits: count(col(fields, 'clicks')),
      botVisits: 0,
    };
    if (fields.length < 2) e.skip = `expected the columns ${YOURLS_COLUMNS.join(',')}`;
    else if (!code) e.skip = 'no keyword';
    else if (!e.url) e.skip = 'no url';
    dates(e, col(fields, 'timestamp'), undefined, 'timestamp', 'expiry');
    return e;
  });
}

function plainCsv(text: string): ImportEntry[] {
  const records = csvRecords(text);
  if (records.length === 0) throw new ImportFileError('the file is empty');
  const columns = records.shift()!.fields.map((f) => f.trim().toLowerCase());
  if (!columns.includes('url')) throw new ImportFileError('the header row has no url column');
  // `short_code` is what perch's own export calls the column, so an export reads back.
  const codeColumn = columns.includes('code') ? 'code' : columns.includes('short_code') ? 'short_code' : undefined;
  const col = (fields: string[], name: string | undefined) => {
    const i = name === undefined ? -1 : columns.indexOf(name);
    return i === -1 ? undefined : fields[i];
  };
  const seen = new Map<string, number>();
  return records.map(({ line, fields }) => {
    const code = col(fields, codeColumn)?.trim() || undefined;
    const url = col(fields, 'url')?.trim() ?? '';
    const created = col(fields, 'created_at')?.trim();
    const expires = col(fields, 'expires_at')?.trim();
    // With a code, the entry is that code for that target (two rows giving one code to two
    // targets are two entries, of which only the first can have it).
    let key = code === undefined ? undefined : JSON.stringify([code, url]);
    if (key === undefined) {
      // Without a code, an entry is what it says; the same row twice is two links, so the
      // occurrence counts too.
      const digest = createHash('sha256').update(JSON.stringify([url, created ?? '', expires ?? ''])).digest('base64url');
      const nth = (seen.get(digest) ?? 0) + 1;
      seen.set(digest, nth);
      key = `${digest}#${nth}`;
    }
    const e: ImportEntry = { where: `line ${line}${code ? ` (${code})` : ''}`, key, code, url, expiresMs: null, visits: 0, botVisits: 0 };
    if (!url) e.skip = 'no url';
    // perch's own export says which links had a password but holds none: imported, such a link
    // would lead anyone to a target its owner kept behind a password.
    if (col(fields, 'password_protected')?.trim().toLowerCase() === 'true') e.skip ??= 'protected by a password, which the export does not hold';
    dates(e, created, expires, 'created_at', 'expires_at');
    return e;
  });
}

/** The entries of an export file, in file order. Throws ImportFileError when the file is not of the format. */
export function parseImport(format: ImportFormat, text: string): ImportEntry[] {
  switch (format) {
    case 'kutt':
      return kutt(text);
    case 'shlink':
      return shlink(text);
    case 'yourls':
      return yourls(text);
    case 'csv':
      return plainCsv(text);
  }
}
