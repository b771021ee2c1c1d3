// The quality value of one element of an Accept-style header (RFC 9110, section 12.4.2).

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
