// HTTP/1.1 over a raw TCP connection, for tests of what fetch cannot send: pipelined requests,
// duplicate framing headers, malformed request lines. Sends bytes as given and parses what comes
// back into responses (status, lower-cased headers, body by Content-Length).
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes received that did not form a whole response. */
  rest: string;
  /** The server closed the connection (rather than the client after `expect` responses). */
  closedByServer: boolean;
}

export interface RawOptions {
  /** Resolve (and close) once this many responses arrived; otherwise wait for the server to close. */
  expect?: number;
  /** Fails the exchange when it has not ended by then (a guard, not an assertion). */
  guardMs?: number;
  /** Pause between the parts of `data`, so that the server reads them separately. */
  pauseMs?: number;
}

function parse(buffer: string): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let rest = buffer;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) break;
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return { responses, rest };
}

/** Sends `data` (parts written separately) on a new connection to 127.0.0.1:`port`. */
export function rawExchange(port: number, data: string | Array<string | Buffer>, opts: RawOptions = {}): Promise<RawExchange> {
  const parts = Array.isArray(data) ? data : [data];
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const guard = setTimeout(() => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(new Error(`the exchange did not end within ${opts.guardMs ?? 30_000} ms; received ${JSON.stringify(received.slice(0, 200))}`));
    }, opts.guardMs ?? 30_000);
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ ...parse(received), closedByServer });
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (opts.expect !== undefined && parse(received).responses.length >= opts.expect) finish(false);
    });
    // A reset is the server closing too: the bytes it sent before still count.
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      for (let i = 0; i < parts.length; i++) {
        if (i > 0 && opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
        if (!socket.destroyed) socket.write(parts[i]);
      }
    });
  });
}
