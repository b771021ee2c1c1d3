// Conditional GET (RFC 9110, section 13.1.2): whether an If-None-Match header matches a
// resource's entity tag, by weak comparison (a W/ prefix on either side is ignored).

/** True when `header` (empty when absent) lists `etag` (quoted, e.g. `"123"`) or is `*`. */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  if (header === '') return false;
  const wanted = opaque(etag);
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || opaque(tag) === wanted) return true;
  }
  return false;
}

function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
