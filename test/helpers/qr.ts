// Decoding QR images in tests, with a real QR reader (jsQR): PNGs through pngjs, and the SVGs
// the server makes by drawing their modules into pixels first.
import jsQR from 'jsqr';
import { PNG } from 'pngjs';

export function decodePng(bytes: Buffer): { width: number; height: number; text: string | null } {
  const png = PNG.sync.read(bytes);
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  return { width: png.width, height: png.height, text: code ? code.data : null };
}

/**
 * Reads an SVG of one `<path>` of horizontal runs (`M x y`, `m dx dy`, `h n`, the rows at y + 0.5),
 * as qrcode writes it, into a bitmap of `scale` pixels per module, and decodes that.
 */
export function decodeSvg(svg: string, scale = 8): { width: number; height: number; text: string | null } {
  const size = /width="(\d+)" height="(\d+)"/.exec(svg);
  const view = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  const path = /<path stroke="#000000" d="([^"]+)"/.exec(svg);
  if (!size || !view || !path) throw new Error('not an SVG of QR modules');
  const n = Number(view[1]);
  const dark = new Uint8Array(n * n);
  let x = 0;
  let y = 0;
  for (const [, op, a, b] of path[1].matchAll(/([MmHh])\s*(-?[\d.]+)(?:\s+(-?[\d.]+))?/g)) {
    if (op === 'M') [x, y] = [Number(a), Number(b)];
    else if (op === 'm') [x, y] = [x + Number(a), y + Number(b)];
    else {
      const run = Number(a);
      for (let i = 0; i < run; i++) dark[Math.floor(y) * n + x + i] = 1;
      x += run;
    }
  }
  const px = n * scale;
  const rgba = new Uint8ClampedArray(px * px * 4);
  for (let i = 0; i < px * px; i++) {
    const v = dark[Math.floor(Math.floor(i / px) / scale) * n + Math.floor((i % px) / scale)] ? 0 : 255;
    rgba[i * 4] = rgba[i * 4 + 1] = rgba[i * 4 + 2] = v;
    rgba[i * 4 + 3] = 255;
  }
  const code = jsQR(rgba, px, px);
  return { width: Number(size[1]), height: Number(size[2]), text: code ? code.data : null };
}
