// The outbox in SQLite: `events`, where every change that background work reacts to is appended
// inside the transaction that makes the change, and `event_consumers`, each consumer's position
// (the last event it processed). Sequence numbers come from AUTOINCREMENT: never reused, so
// positions and the newest event stay meaningful after the oldest events are pruned.
import type { Statement } from 'better-sqlite3';
import { spanSql, type Sqlite } from '../store/sqlite';

/** An event as appended; `type` names what happened (each capability has its own). */
export interface OutboxEvent {
  type: string;
  actorId: string | null;
  recipientId: string | null;
  postId: string | null;
  payload: string;
  createdAt: string;
}

export interface EventRow {
  seq: number;
  type: string;
  actor_id: string | null;
  recipient_id: string | null;
  post_id: string | null;
  payload: string;
  created_at: string;
}

/** A position in the outbox; `types`, when given, are the only events its holder reads. */
export interface PositionSpec {
  name: string;
  types?: readonly string[];
  /**
   * The holder waits for the signal of its types (outbox/module.ts, outboxSignal) to learn of new
   * events; every consumer with types does.
   */
  signal?: boolean;
}

/** The columns an event is inserted with, and one row's placeholders. */
const EVENT_INSERT = 'events (type, actor_id, recipient_id, post_id, payload, created_at)';
const ROW = '(?, ?, ?, ?, ?, ?)';

/** A string as an SQL literal. */
function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** SQL for a position by name: the last event processed, 0 before the first. */
export function positionSql(name: string): string {
  return `COALESCE((SELECT last_seq FROM event_consumers WHERE name = '${name}'), 0)`;
}

/** Events kept: events are only ever deleted from the oldest on, so their numbers have no gaps. */
export const KEPT_SQL = spanSql('events', 'seq');

export class OutboxStore {
  private readonly insert: Statement;
  /** appendUniform's statements, by row count, type and payload. */
  private readonly uniformInserts = new Map<string, Statement>();
  private readonly positionStmt: Statement;
  private readonly setPositionStmt: Statement;
  private readonly newestStmt: Statement;
  private readonly oldestAfterStmt: Statement;
  private readonly keptStmt: Statement;
  private readonly pruneStmt: Statement;
  /** Per list of types: the first event of those types in a range, and the lag in them. */
  private readonly firstOfTypesStmts = new Map<string, Statement>();
  private readonly typedLagStmts = new Map<string, Statement>();
  private readonly rangeStmt: Statement;
  /** Who watches appends (watch): the types watched (null: all), and whether one came since it asked. */
  private readonly watchers: Array<{ types: ReadonlySet<string> | null; appended: boolean }> = [];

  constructor(private readonly db: Sqlite) {
    this.insert = db.prepare(`INSERT INTO ${EVENT_INSERT} VALUES ${ROW}`);
    this.positionStmt = db.prepare('SELECT last_seq FROM event_consumers WHERE name = ?').pluck();
    this.setPositionStmt = db.prepare(
      'INSERT INTO event_consumers (name, last_seq, updated_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET last_seq = excluded.last_seq, updated_at = excluded.updated_at',
    );
    this.newestStmt = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck();
    this.oldestAfterStmt = db.prepare('SELECT created_at FROM events WHERE seq > ? ORDER BY seq LIMIT 1').pluck();
    this.keptStmt = db.prepare(KEPT_SQL).pluck();
    // The oldest `limit` events at or below the bound, up to the last of them made before the
    // cutoff. Events are numbered as they commit and dated as their request ran, a few
    // milliseconds apart at most, so this is the prefix older than the cutoff, give or take.
    this.pruneStmt = db.prepare(
      `DELETE FROM events WHERE seq <= (
         SELECT MAX(seq) FROM (SELECT seq, created_at FROM events WHERE seq <= @upTo ORDER BY seq LIMIT @limit)
         WHERE created_at < @before)`,
    );
    this.rangeStmt = db.prepare('SELECT seq, type, actor_id, recipient_id, post_id, payload, created_at FROM events WHERE seq > ? AND seq <= ? ORDER BY seq');
  }

  /** Appends an event, in the caller's transaction. */
  append(e: OutboxEvent): void {
    this.insert.run(e.type, e.actorId, e.recipientId, e.postId, e.payload, e.createdAt);
    this.noteAppended(e.type);
  }

  /**
   * Appends `rows` events of one type and payload, without a recipient, in one statement, in the
   * caller's transaction: `values` holds each event's actor, post id and time, in order. A
   * statement call and its bindings per row cost more than the row itself, so only what differs
   * from one event to the next is bound: the type and payload are part of the statement's text.
   * Callers keep rows × 3 well under SQLite's 32,766 variables.
   */
  appendUniform(type: string, payload: string, rows: number, values: readonly unknown[]): void {
    this.uniformInsert(type, payload, rows).run(values);
    this.noteAppended(type);
  }

  private noteAppended(type: string): void {
    for (const w of this.watchers) if (w.types === null || w.types.has(type)) w.appended = true;
  }

  private uniformInsert(type: string, payload: string, rows: number): Statement {
    const key = `${rows} ${type} ${payload}`;
    let statement = this.uniformInserts.get(key);
    if (!statement) {
      const row = `(${sqlText(type)}, ?, NULL, ?, ${sqlText(payload)}, ?)`;
      statement = this.db.prepare(`INSERT INTO ${EVENT_INSERT} VALUES ${Array(rows).fill(row).join(', ')}`);
      this.uniformInserts.set(key, statement);
    }
    return statement;
  }

  /**
   * A function that tells whether events were appended through this store since it last asked:
   * events of one of `types`, or of any type without them (the writer's signals, outbox/module.ts).
   */
  watch(types?: readonly string[]): () => boolean {
    const watcher = { types: types ? new Set(types) : null, appended: false };
    this.watchers.push(watcher);
    return () => {
      const appended = watcher.appended;
      watcher.appended = false;
      return appended;
    };
  }

  /** The last event `name` processed; 0 before its first. */
  position(name: string): number {
    return (this.positionStmt.get(name) as number | undefined) ?? 0;
  }

  /** Records that `name` processed every event up to `seq`, in the caller's transaction. */
  setPosition(name: string, seq: number, now: string): void {
    this.setPositionStmt.run(name, seq, now);
  }

  /** The newest committed event's sequence number. */
  newest(): number {
    return (this.newestStmt.get() as number | undefined) ?? 0;
  }

  /**
   * Events after `name`'s position, and the age in seconds of the oldest of them; with `types`,
   * only the events of those types (the others are nothing to the position's holder).
   */
  lag(name: string, now = Date.now(), types?: readonly string[]): { events: number; seconds: number } {
    const last = this.position(name);
    let events: number;
    let oldest: string | null | undefined;
    if (types) {
      const sql = (list: string) => `SELECT COUNT(*) AS events, MIN(created_at) AS oldest FROM events WHERE seq > ? AND type IN (${list})`;
      ({ events, oldest } = this.statementFor(this.typedLagStmts, types, sql, false).get(last, ...types) as { events: number; oldest: string | null });
    } else {
      events = Math.max(0, this.newest() - last);
      oldest = events === 0 ? null : (this.oldestAfterStmt.get(last) as string | undefined);
    }
    return { events, seconds: oldest ? Math.max(0, (now - Date.parse(oldest)) / 1000) : 0 };
  }

  /** The first event of one of `types` in (after, upTo], or null when there is none. */
  firstOfTypes(types: readonly string[], after: number, upTo: number): number | null {
    const sql = (list: string) => `SELECT seq FROM events WHERE seq > ? AND seq <= ? AND type IN (${list}) ORDER BY seq LIMIT 1`;
    const stmt = this.statementFor(this.firstOfTypesStmts, types, sql, true);
    return (stmt.get(after, upTo, ...types) as number | undefined) ?? null;
  }

  /** A statement made for a list of types (one placeholder each), once per list. */
  private statementFor(cache: Map<string, Statement>, types: readonly string[], sql: (placeholders: string) => string, pluck: boolean): Statement {
    const key = types.join(',');
    let stmt = cache.get(key);
    if (!stmt) {
      stmt = this.db.prepare(sql(types.map(() => '?').join(', ')));
      if (pluck) stmt.pluck();
      cache.set(key, stmt);
    }
    return stmt;
  }

  /** Events kept: not yet processed by every position, or processed within the retention. */
  kept(): number {
    return (this.keptStmt.get() as number) ?? 0;
  }

  /** The events in (after, upTo], in order. */
  range(after: number, upTo: number): EventRow[] {
    return this.rangeStmt.all(after, upTo) as EventRow[];
  }

  /**
   * Deletes up to `limit` of the oldest events that every position is done with and that were
   * made before `before`, in the caller's transaction; returns how many. A position without a row
   * yet counts as at the start, so it holds back everything. A position with `types` is done with
   * every event before the first of those types after it.
   */
  prune(positions: readonly PositionSpec[], before: string, limit: number): number {
    let upTo = Infinity;
    for (const p of positions) upTo = Math.min(upTo, this.doneUpTo(p));
    if (!(upTo > 0)) return 0;
    return this.pruneStmt.run({ upTo, before, limit }).changes;
  }

  private doneUpTo(p: PositionSpec): number {
    const last = this.position(p.name);
    if (!p.types) return last;
    const newest = this.newest();
    const next = this.firstOfTypes(p.types, last, newest);
    return next === null ? newest : next - 1;
  }
}

const stores = new WeakMap<Sqlite, OutboxStore>();

/** The outbox store of a connection (one per connection, so appends are counted in one place). */
export function outboxOf(db: Sqlite): OutboxStore {
  let s = stores.get(db);
  if (!s) stores.set(db, (s = new OutboxStore(db)));
  return s;
}
