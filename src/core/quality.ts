// The elements of an Accept-style header and their quality values (RFC 9110, sections 12.4.2 and
// 12.5): `text/html, application/json;q=0.5` or `br, gzip;q=0.8`.

/** The `q` of an element's parameters (`q=0.5`); 1 when absent, 0 when malformed. */
export function quality(params: string): number {
  for (const param of params.split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = param.slice(eq + 1).trim();
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) return 0;
    return Number(value);
  }
  return 1;
}

/** Calls `each` with every element of the header: its value in lower case, without parameters, and its quality. */
export function forEachElement(header: string, each: (value: string, q: number) => void): void {
  for (const part of header.split(',')) {
    const semi = part.indexOf(';');
    const value = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (value !== '') each(value, semi === -1 ? 1 : quality(part.slice(semi + 1)));
  }
}
