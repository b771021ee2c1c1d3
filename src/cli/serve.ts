import { resolve } from 'node:path';
import { serve } from '../server/supervisor';
import { commandConfig, refuseBackupAsData, type CommonOptions } from './common';

interface ServeOptions extends CommonOptions {
  port?: number;
  host?: string;
  threads?: number;
}

export async function serveCommand(opts: ServeOptions): Promise<void> {
  const server: Record<string, string | number> = {};
  if (opts.port !== undefined) server.port = opts.port;
  if (opts.host !== undefined) server.host = opts.host;
  if (opts.threads !== undefined) server.threads = opts.threads;
  const config = commandConfig(opts, { server });
  const dataDir = resolve(config.data);
  refuseBackupAsData(dataDir);
  await serve({ config, dataDir });
}
