// Saving a file that was fetched with the key (an export, a QR code): the browser cannot send the
// Authorization header on a plain link, so the file is read first and saved from a blob: URL.
import { requestFile } from './api';

export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The download has started from the URL by now; keep it a moment for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Fetches `path` with the key and saves it, under the server's file name or `fallbackName`. */
export async function download(path: string, fallbackName: string): Promise<string> {
  const { blob, filename } = await requestFile(path);
  const name = filename ?? fallbackName;
  saveBlob(blob, name);
  return name;
}
