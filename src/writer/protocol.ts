// What crosses between a writer's clients and the writer: requests of named operations, replies,
// and errors in a form that survives structured cloning. Shared by both ends, wherever the writer
// runs (its own thread, or the thread of the server's only HTTP thread).
import { HttpError, type ErrorCode } from '../http/errors';

/** Client → writer: flat triples of request number, operation name, arguments. */
export type WriteRequest = unknown[];
/** Writer → client: flat triples of request number, 1 (ok) or 0 (failed), result or error. */
export type WriteReply = unknown[];

/** An error as it crosses threads; an HttpError keeps everything needed to answer with it. */
export type WireError =
  | { http: true; code: ErrorCode; message: string; extra: Record<string, unknown>; headers: Record<string, string> }
  | { http: false; message: string; name: string };

export function toWire(err: unknown): WireError {
  if (err instanceof HttpError) return { http: true, code: err.code, message: err.message, extra: err.extra, headers: err.headers };
  const e = err instanceof Error ? err : new Error(String(err));
  return { http: false, message: e.message, name: e.name };
}

export function fromWire(w: WireError): Error {
  if (w.http) return new HttpError(w.code, w.message, w.extra, w.headers);
  const e = new Error(w.message);
  e.name = w.name;
  return e;
}

/** One operation's outcome in a group. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
