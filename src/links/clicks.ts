// The click queue: a durable queue in LMDB, appended to by the redirect path without waiting, and
// drained in batches by a pool task into SQLite aggregates. The redirect path only pushes onto an
// in-memory array; the clicks gathered go to LMDB as one un-awaited put (one queue entry) when
// they reach about ENTRY_BYTES encoded, or ENTRY_WINDOW_MS after the first of them, whichever
// comes first. Keys are [ms of the first click, node id, sequence]: time-ordered, and unique
// across threads and processes because node ids are leased.
//
// Why entries of that size: LMDB's file keeps the largest the queue ever was, in pages, and a
// page holds whole entries. One entry per event-loop turn, as the queue first had, meant entries
// of two or three clicks under a redirect load (turns of a few tens of microseconds), each with
// its own key and node header, in pages that sequential inserts leave half full: a few seconds of
// clicks took 15 MiB of file and of resident memory. An entry that stays under the largest value
// LMDB keeps inside a page (about 2 KiB with 4 KiB pages) never needs overflow pages, which need
// runs of contiguous free pages and make the file grow when the free ones are scattered
// (docs/memory.md). The window bounds how long a click waits in memory on a quiet server.
//
// A person's click carries its User-Agent to the drain, which derives the browser and OS families
// from it and stores only those; the redirect path never parses one. An entry holds each distinct
// User-Agent once and its clicks refer to it by index, so clicks from a few browsers write a few
// strings, not one each.
import { aggregateClicks, splitAggregate, type ClickAggregate, type ClickEvent } from '../core/clicks';
import { FamilyMemo } from '../core/user-agent';
import { errorFields, log } from '../log';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { LinkStore } from './store';

export const CLICK_QUEUE_DB = 'link_click_queue';

export type ClickKey = [number, number, number];
/**
 * The batch's distinct User-Agents first, then flat groups of four: code, at (ms), referrer host
 * ('' when none), and for a person the index of their User-Agent in the list, for a bot -1.
 * Entries queued before User-Agents were kept have no list in front, and 1 for a bot else 0.
 */
export type ClickBatch = Array<string | number | string[]>;
const FIELDS = 4;
const BOT = -1;

/**
 * The encoded size (msgpack, estimated from below) at which the clicks gathered are written as
 * one entry: with its key, under the 2,038 bytes LMDB keeps inside a 4 KiB page.
 */
export const ENTRY_BYTES = 1800;
/** The longest the first click of an entry waits in memory before the entry is written. */
export const ENTRY_WINDOW_MS = 20;
/** msgpack's bytes around an entry: its array, the User-Agent list's array, their headers. */
const ENTRY_OVERHEAD = 6;
/** msgpack's bytes for a click beside its two strings: the two string headers, the time, the agent. */
const CLICK_OVERHEAD = 12;

function onClickWriteError(err: unknown): void {
  log.error('click enqueue failed', errorFields(err));
}

export function openClickQueue(hot: HotStore): LmdbDb<ClickBatch, ClickKey> {
  return hot.db<ClickBatch, ClickKey>(CLICK_QUEUE_DB);
}

export class ClickQueue {
  readonly db: LmdbDb<ClickBatch, ClickKey>;
  private seq = 0;
  private agents: string[] = [];
  /** User-Agent → its index in `agents`, for the batch being gathered. */
  private agentIndex = new Map<string, number>();
  /** The last person's User-Agent and its index: the same browser often clicks several times a turn. */
  private lastAgent = '';
  private lastIndex = -1;
  private pending: ClickBatch = [this.agents];
  private firstMs = 0;
  /** The pending entry's encoded size, estimated from below. */
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastWrite: Promise<boolean> | undefined;
  private readonly flushLater: () => void;

  constructor(hot: HotStore, private readonly nodeId: number) {
    this.db = openClickQueue(hot);
    this.flushLater = () => {
      this.timer = undefined;
      this.flush();
    };
  }

  /**
   * Appends a click; never waits. A bot's User-Agent is not kept: only people's clicks are counted
   * by browser and OS.
   */
  push(code: string, atMs: number, referrer: string, bot: boolean, userAgent: string): void {
    const p = this.pending;
    if (p.length === 1) {
      this.firstMs = atMs;
      this.bytes = ENTRY_OVERHEAD;
      this.timer = setTimeout(this.flushLater, ENTRY_WINDOW_MS);
    }
    let agent = BOT;
    if (!bot) {
      if (userAgent === this.lastAgent && this.lastIndex !== -1) agent = this.lastIndex;
      else {
        const known = this.agentIndex.get(userAgent);
        if (known !== undefined) agent = known;
        else {
          agent = this.agents.length;
          this.agents.push(userAgent);
          this.agentIndex.set(userAgent, agent);
          this.bytes += 3 + userAgent.length;
        }
        this.lastAgent = userAgent;
        this.lastIndex = agent;
      }
    }
    p.push(code, atMs, referrer, agent);
    this.bytes += CLICK_OVERHEAD + code.length + referrer.length;
    if (this.bytes >= ENTRY_BYTES) this.flush();
  }

  /** Writes the clicks pushed so far as one queue entry (un-awaited). */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    if (batch.length === 1) return;
    this.agents = [];
    this.agentIndex = new Map();
    this.lastIndex = -1;
    this.pending = [this.agents];
    const w = this.db.put([this.firstMs, this.nodeId, ++this.seq], batch);
    // lmdb-js hands every write of one batch the same promise; one handler per batch is enough.
    if (w !== this.lastWrite) {
      this.lastWrite = w;
      w.catch(onClickWriteError);
    }
  }
}

export interface QueueState {
  /** Queue entries (each up to about ENTRY_BYTES of clicks, or ENTRY_WINDOW_MS of them). */
  depth: number;
  /** Seconds since the oldest queued click; 0 when empty. */
  lagSeconds: number;
}

export function clickQueueState(db: LmdbDb<ClickBatch, ClickKey>, nowMs = Date.now()): QueueState {
  const depth = (db.getStats() as { entryCount: number }).entryCount;
  let lagSeconds = 0;
  for (const key of db.getKeys({ limit: 1 })) lagSeconds = Math.max(0, (nowMs - (key as ClickKey)[0]) / 1000);
  return { depth, lagSeconds };
}

/**
 * Links per drain transaction, at most. The drain holds SQLite's write lock for its whole
 * transaction, and post creation's group commits wait for it: a batch over thousands of distinct
 * links held it for a long time as one transaction, and parts of this size (with
 * DRAIN_PART_PAUSE_MS between them) keep the writer's waits short (bench/HISTORY.md).
 */
export const DRAIN_PART_LINKS = 250;
/**
 * Pause between two parts of a batch. SQLite's lock is not handed over in order: a drain that
 * began its next part at once would take it again before a writer waiting on a timer (the
 * server's writer retries every millisecond, on an event loop that may be busy) got a turn.
 */
export const DRAIN_PART_PAUSE_MS = 5;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Moves the queue into the aggregates, in batches of about `batchClicks` clicks (up to
 * `maxBatches`; by default until the queue is empty). Large, infrequent batches are what keep the
 * drain cheap: a batch costs a few SQLite upserts per distinct link in it, whatever its clicks.
 * A batch is aggregated whole, then committed in parts of at most `partLinks` links, one
 * transaction each, so that other writers never wait long for SQLite's lock; each part records
 * the batch's progress in the same transaction (LinkStore.addClickPart). Only after the last part
 * are the batch's entries removed from the queue. A batch that a crash interrupted is finished
 * first, from the part after the last one committed, and a batch committed whole whose entries
 * were not removed yet is only removed: every click is counted once. Returns the clicks moved.
 */
export function drainClicks(
  db: LmdbDb<ClickBatch, ClickKey>,
  store: LinkStore,
  batchClicks = 100_000,
  maxBatches = Infinity,
  partLinks = DRAIN_PART_LINKS,
): number {
  let drained = finishInterruptedBatch(db, store);
  for (let b = 0; b < maxBatches; b++) {
    db.resetReadTxn();
    const keys: ClickKey[] = [];
    // Aggregated as the entries are read: memory holds the aggregate (bounded by the distinct
    // links, days, minutes and referrers in the batch), never a copy of every click.
    const agg = aggregateClicks(queuedEvents(db.getRange({}), keys, batchClicks));
    // The batch is in memory now. Its SQLite parts take a while (pauses included) while the HTTP
    // threads keep writing the queue: a snapshot held meanwhile would keep LMDB from reusing any
    // page those writes free, and the file would grow with every slow drain (docs/memory.md).
    db.resetReadTxn();
    if (keys.length === 0) break;
    commitBatch(db, store, keys, agg, partLinks, 0);
    drained += agg.events;
    if (agg.events < batchClicks) break;
  }
  return drained;
}

/** Browser and OS families of the User-Agents the drain has seen lately (one per pool thread). */
const families = new FamilyMemo();

/**
 * The clicks of queue entries, in order, until at least `limit` were given (whole entries only);
 * each entry's key is appended to `keys` as it is read. One event object is handed out again and
 * again: the aggregation copies what it keeps.
 */
function* queuedEvents(entries: Iterable<{ key: ClickKey; value: ClickBatch }>, keys: ClickKey[], limit: number): Generator<ClickEvent> {
  const e: ClickEvent = { code: '', atMs: 0, referrer: '', bot: false };
  let given = 0;
  for (const { key, value } of entries) {
    keys.push(key);
    if (!Array.isArray(value[0])) {
      // Queued before User-Agents were kept: no families for these clicks.
      e.browser = undefined;
      e.os = undefined;
      for (let i = 0; i + 3 < value.length; i += 4) {
        e.code = value[i] as string;
        e.atMs = value[i + 1] as number;
        e.referrer = value[i + 2] as string;
        e.bot = value[i + 3] === 1;
        given++;
        yield e;
      }
    } else {
      const agents = value[0];
      for (let i = 1; i + FIELDS - 1 < value.length; i += FIELDS) {
        const agent = value[i + 3] as number;
        e.code = value[i] as string;
        e.atMs = value[i + 1] as number;
        e.referrer = value[i + 2] as string;
        e.bot = agent === BOT;
        if (agent >= 0 && agent < agents.length) {
          const f = families.of(agents[agent]);
          e.browser = f.browser;
          e.os = f.os;
        } else {
          e.browser = undefined;
          e.os = undefined;
        }
        given++;
        yield e;
      }
    }
    if (given >= limit) return;
  }
}

/** Commits a batch's parts from `firstPart` on, then removes its entries from the queue. */
function commitBatch(db: LmdbDb<ClickBatch, ClickKey>, store: LinkStore, keys: ClickKey[], agg: ClickAggregate, partLinks: number, firstPart: number): void {
  const parts = splitAggregate(agg, partLinks);
  const keysJson = JSON.stringify(keys);
  for (let i = firstPart; i < parts.length; i++) {
    // A synchronous sleep: the drain runs in a pool thread, which has nothing else to do meanwhile.
    if (i > firstPart) Atomics.wait(pause, 0, 0, DRAIN_PART_PAUSE_MS);
    store.addClickPart(parts[i], { keys: i === 0 ? keysJson : null, parts: parts.length, partLinks, done: i + 1 });
  }
  removeEntries(db, keys);
}

/** Removes a batch's entries from the queue, all in one transaction. */
function removeEntries(db: LmdbDb<ClickBatch, ClickKey>, keys: ClickKey[]): void {
  db.transactionSync(() => {
    for (const k of keys) db.removeSync(k);
  });
}

/** Finishes the batch the last drain recorded, if it did not get to the end; returns its clicks. */
function finishInterruptedBatch(db: LmdbDb<ClickBatch, ClickKey>, store: LinkStore): number {
  const state = store.clickDrain();
  if (!state) return 0;
  const keys = JSON.parse(state.keys) as ClickKey[];
  db.resetReadTxn();
  // A batch's entries leave the queue in one transaction: none left means it was finished.
  if (db.get(keys[0]) === undefined) return 0;
  if (state.done >= state.parts) {
    // Committed whole; the stop came before its entries left the queue.
    removeEntries(db, keys);
    return 0;
  }
  const agg = aggregateClicks(queuedEvents(entriesOf(db, keys), [], Infinity));
  db.resetReadTxn();
  log.info('click drain: finishing a batch a stop interrupted', { parts: state.parts, done: state.done });
  // Split as it was first split, whatever the part size is now.
  commitBatch(db, store, keys, agg, state.partLinks, state.done);
  return agg.events;
}

function* entriesOf(db: LmdbDb<ClickBatch, ClickKey>, keys: ClickKey[]): Generator<{ key: ClickKey; value: ClickBatch }> {
  for (const key of keys) {
    const value = db.get(key);
    if (value !== undefined) yield { key, value };
  }
}
