// The web client's files, loaded from the build's directory into memory once per HTTP thread, with
// every response header precomputed per file and per content coding: a request only picks the
// coding (accept-encoding.ts) and compares its If-None-Match.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { MANIFEST_NAME, type WebManifest } from './manifest';
import type { Coding } from './accept-encoding';

/** Where `npm run build` puts the web client: dist/web, beside dist/src. */
export const DEFAULT_WEB_DIR = join(__dirname, '..', '..', 'web');

// Hashed names never change content: cache them for a year and never revalidate. The page that
// names them must always be revalidated, or a browser would keep loading an old version.
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

export interface Variant {
  body: Buffer;
  etag: string;
  /** Headers of a 200: caching, validator, coding. */
  headers: Record<string, string>;
  /** Headers of a 304: the same, less Content-Encoding (a 304 carries no body to describe). */
  notModifiedHeaders: Record<string, string>;
}

export interface Asset {
  contentType: string;
  variants: Record<Coding, Variant>;
}

export interface WebAssets {
  /** The page served at `/`. */
  page: Asset;
  /** Everything under `/app/`, by file name. */
  files: Map<string, Asset>;
  manifest: WebManifest;
}

/** The entity tag of one coding of a file: each coding is its own representation, so its own tag. */
function entityTag(tag: string, coding: Coding): string {
  return coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
}

/**
 * Headers of the service worker's answers: its scope may be the whole origin (the page is at `/`,
 * above `/app/`, where the script lives), and the page's policy governs the worker too (a worker
 * takes its policy from its own script's answer, not from the page that registers it).
 */
function serviceWorkerHeaders(pagePolicy: Record<string, string>): Record<string, string> {
  return { 'Service-Worker-Allowed': '/', ...pagePolicy };
}

/**
 * Reads the build (manifest, files and their `.gz` and `.br` forms). `extraPageHeaders` go on the
 * page's answers (its Content-Security-Policy) and the service worker's. Undefined when there is
 * no build.
 */
export function loadWebAssets(dir: string, extraPageHeaders: Record<string, string>): WebAssets | undefined {
  const manifestPath = join(dir, MANIFEST_NAME);
  if (!existsSync(manifestPath)) return undefined;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as WebManifest;
  let page: Asset | undefined;
  const files = new Map<string, Asset>();
  for (const f of manifest.files) {
    const isPage = f.url === '/';
    const cacheControl = f.immutable ? IMMUTABLE : REVALIDATE;
    const tag = f.sha256.slice(0, 24);
    const variant = (coding: Coding, suffix: string): Variant => {
      const etag = entityTag(tag, coding);
      const common: Record<string, string> = {
        'Cache-Control': cacheControl,
        ETag: etag,
        Vary: 'Accept-Encoding',
        'X-Content-Type-Options': 'nosniff',
        ...(isPage ? extraPageHeaders : {}),
        ...(f.service_worker ? serviceWorkerHeaders(extraPageHeaders) : {}),
      };
      const headers = coding === 'identity' ? common : { ...common, 'Content-Encoding': coding };
      return { body: readFileSync(join(dir, f.path + suffix)), etag, headers, notModifiedHeaders: common };
    };
    const asset: Asset = {
      contentType: f.content_type,
      variants: { identity: variant('identity', ''), gzip: variant('gzip', '.gz'), br: variant('br', '.br') },
    };
    if (isPage) page = asset;
    else files.set(f.url.slice('/app/'.length), asset);
  }
  if (!page) throw new Error(`${manifestPath} names no page at /`);
  return { page, files, manifest };
}

/**
 * An asset with another body in place of the built one (the page, once the server has filled in
 * its feature list): its own entity tags, made from the new body, and each coding compressed here,
 * at the build's levels, when it is first asked for. A server that never serves its page (an API
 * or redirect server) then never holds a compressor's buffers. The headers are the asset's own
 * otherwise.
 */
export function withBody(asset: Asset, body: Buffer): Asset {
  const tag = createHash('sha256').update(body).digest('hex').slice(0, 24);
  const variant = (coding: Coding, bytes: Buffer): Variant => {
    const etag = entityTag(tag, coding);
    const built = asset.variants[coding];
    return { body: bytes, etag, headers: { ...built.headers, ETag: etag }, notModifiedHeaders: { ...built.notModifiedHeaders, ETag: etag } };
  };
  const compressors: Record<Exclude<Coding, 'identity'>, () => Buffer> = {
    gzip: () => gzipSync(body, { level: 9 }),
    br: () =>
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
  };
  const variants = { identity: variant('identity', body) } as Record<Coding, Variant>;
  for (const coding of ['gzip', 'br'] as const) {
    let made: Variant | undefined;
    Object.defineProperty(variants, coding, { enumerable: true, get: () => (made ??= variant(coding, compressors[coding]())) });
  }
  return { contentType: asset.contentType, variants };
}

/**
 * The page's Content-Security-Policy: scripts, styles and everything else only from perch itself
 * (no inline script or style), images also as data: and blob: URLs (previews of uploads, QR codes
 * fetched with the key), and WebSocket connections to the public origin. CSP Level 3 browsers let
 * 'self' cover ws: and wss: of the page's own host already; the public origin's ws and wss forms
 * are named for the browsers that do not.
 */
export function contentSecurityPolicy(publicOrigin: string): string {
  const host = new URL(publicOrigin).host;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src 'self' ws://${host} wss://${host}`,
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}
