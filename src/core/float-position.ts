// A float64 as two decimal integers, so that a relevance score can be one part of a cursor's
// position (core/cursor.ts takes decimal parts only) and come back bit for bit: a keyset page
// compares the engine's score with the cursor's for equality, which a printed decimal could miss.
// Pure.

const view = new DataView(new ArrayBuffer(8));
const UINT32 = /^(0|[1-9][0-9]{0,9})$/;

/** The high and low 32 bits of `x`'s IEEE 754 representation, as decimal strings. */
export function floatToParts(x: number): [hi: string, lo: string] {
  view.setFloat64(0, x);
  return [String(view.getUint32(0)), String(view.getUint32(4))];
}

/** The float64 whose bits `floatToParts` gave, or null when the parts are not two uint32s or name a NaN. */
export function partsToFloat(hi: string, lo: string): number | null {
  if (!UINT32.test(hi) || !UINT32.test(lo)) return null;
  const h = Number(hi);
  const l = Number(lo);
  if (h > 0xffffffff || l > 0xffffffff) return null;
  view.setUint32(0, h);
  view.setUint32(4, l);
  const x = view.getFloat64(0);
  return Number.isNaN(x) ? null : x;
}
