// The manifest the web client's build (scripts/build-web.js) writes beside its files, and that
// the server and the tests read: one entry per file, with its sizes in each precompressed form.

export const MANIFEST_NAME = 'manifest.json';

export interface ManifestFile {
  /** Where the file lies, relative to the build's directory; `.gz` and `.br` lie beside it. */
  path: string;
  /** Where it is served: `/` for the page, `/app/<name>` for everything else. */
  url: string;
  content_type: string;
  /** A name that changes with the content (`app-<hash>.js`), so it may be cached for good. */
  immutable: boolean;
  /** SHA-256 of the file as it is, in hex. */
  sha256: string;
  bytes: number;
  gzip_bytes: number;
  br_bytes: number;
  /** JavaScript the first screen loads (the entry and what it imports statically). */
  first_screen: boolean;
  /**
   * The service worker (`/app/sw.js`): a fixed name, so that a registration keeps finding it
   * across builds; served revalidated, with `Service-Worker-Allowed: /` (docs/web.md).
   */
  service_worker?: boolean;
}

export interface WebManifest {
  version: 1;
  files: ManifestFile[];
  /** Sum of `gzip_bytes` over the first screen's JavaScript. */
  first_screen_js_gzip_bytes: number;
  /** The bound the build enforces on that sum. */
  budget_gzip_bytes: number;
}
