// Uploaded media: the bytes are files under <data>/media, written and synced before the metadata
// row is committed, so a committed row always has its file. Files are named by the media id.
import { mkdirSync, openSync, writeSync, fsyncSync, closeSync, renameSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export class MediaFiles {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'media');
    mkdirSync(this.dir, { recursive: true });
  }

  /** Writes the file durably: temporary name, fsync, rename, fsync of the directory. */
  write(id: string, bytes: Buffer): void {
    const final = join(this.dir, id);
    const tmp = `${final}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, final);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }

  read(id: string): Promise<Buffer> {
    return readFile(join(this.dir, id));
  }
}
