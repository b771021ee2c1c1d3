// Image types accepted for upload, recognised by their magic bytes (the declared Content-Type
// alone is never trusted).

export const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

export function isMediaType(s: string): s is MediaType {
  return (MEDIA_TYPES as readonly string[]).includes(s);
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(buf: Uint8Array, bytes: number[], at = 0): boolean {
  if (buf.length < at + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

function ascii(s: string): number[] {
  return [...s].map((c) => c.charCodeAt(0));
}

/** The image type the bytes are, or null when they are none of the accepted ones. */
export function sniffMediaType(buf: Uint8Array): MediaType | null {
  if (startsWith(buf, PNG)) return 'image/png';
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(buf, ascii('GIF87a')) || startsWith(buf, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(buf, ascii('RIFF')) && startsWith(buf, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}

/** The media type of a Content-Type header value, lower case, without parameters. */
export function baseContentType(header: string): string {
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}
