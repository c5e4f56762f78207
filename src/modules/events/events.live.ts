import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';
import { validationError } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { listen, type Listener } from '../../platform/listener.ts';
import type { Logger } from '../../platform/logger.ts';
import { clientSessionOf, resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { EventType } from './events.catalog.ts';

// Live events (docs/partner-guide.md "Live booking status", docs/architecture.md "Live events",
// docs/adr/0029-live-events-over-sse.md): the events recorded by recordEvent, read back from the
// `event` table in one total order and handed to the subscribers of this process.
//
// - **Order.** An event's position is (txid, seq): the transaction that wrote it, then the order
//   within it. An event is handed out only when every transaction of this database older than its
//   own has ended (the horizon below), so an event that commits later can never have a position
//   below one already handed out: a cursor is never overtaken, and resuming after it loses nothing.
// - **Wake-up.** The row's trigger NOTIFYs `event_recorded` in the transaction that writes it; one
//   dedicated connection per process LISTENs (src/platform/listener.ts). A notification only wakes
//   the reader: what is delivered is always read from the table after the process's cursor, so a
//   notification missed while the connection was down is caught up when it is back.
// - **Fan-out.** One reader per process, whatever the number of subscribers; each subscriber takes
//   the events of its reseller (and of its client, for a client-session caller) and of its types.
// - **Resume.** A subscriber that names the last event it saw (`after`, or `Last-Event-ID`) first
//   gets the events after it from the table, in order, then the live ones past the last replayed:
//   no gap, no duplicate.
// Nothing here holds a connection while it waits: each read takes one from the pool and gives it back.

export const EVENT_CHANNEL = 'event_recorded';

/** An event's place in the total order. */
export interface EventPosition {
  txid: bigint;
  seq: bigint;
}

/** An event as a subscriber receives it: what its resolver needs to read the object with the subscriber's tenancy. */
export interface LiveEvent {
  id: string;
  type: EventType;
  resellerId: string;
  clientId: string | null;
  /** The id of the event's `data.object` (the booking, the access code). */
  objectId: string;
  occurredAt: Date;
  position: EventPosition;
}

interface EventRow {
  id: string;
  type: string;
  reseller_id: string;
  client_id: string | null;
  object_id: string;
  created_at: Date | string;
  txid: string;
  seq: string;
  ready?: boolean;
}

// The horizon: the oldest transaction of this database still running when the statement's snapshot
// was taken (or the snapshot's xmax when none is). Transactions of other databases on the same
// server are left out when pg_stat_activity names them, so another database's long transaction
// does not hold this one's events back. A transaction that ended after the snapshot counts: the
// next read, moments later, goes past it.
const HORIZON = `with snap as (select pg_current_snapshot() as s),
  horizon as (
    select coalesce(
      (select min(x) from snap, pg_snapshot_xip(snap.s) as x
        where xid(x) not in (select backend_xid from pg_stat_activity
                              where backend_xid is not null and datname <> current_database())),
      (select pg_snapshot_xmax(s) from snap)) as h)`;

const COLUMNS = `e.id, e.type, e.reseller_id, e.client_id, e.payload->'data'->'object'->>'id' as object_id, e.created_at,
  e.txid::text as txid, e.seq::text as seq`;

const PUMP_BATCH = 500;
/** Every event after the cursor, with whether it is below the horizon yet. */
const PUMP = `${HORIZON}
  select ${COLUMNS}, e.txid < horizon.h as ready from event e, horizon
   where (e.txid, e.seq) > (?::xid8, ?::bigint) order by e.txid, e.seq limit ${PUMP_BATCH}`;

/** The last event below the horizon: where a reader starting now begins. */
const TAIL = `${HORIZON}
  select e.txid::text as txid, e.seq::text as seq from event e, horizon
   where e.txid < horizon.h order by e.txid desc, e.seq desc limit 1`;

const REPLAY_BATCH = 100;
/** A subscriber's missed events: its reseller's (and client's), of its types, after its cursor, below the horizon. */
const REPLAY = `${HORIZON}
  select ${COLUMNS} from event e, horizon
   where e.reseller_id = ? and e.type = any(?::text[]) and (?::text is null or e.client_id = ?::text)
     and (e.txid, e.seq) > (?::xid8, ?::bigint) and e.txid < horizon.h
   order by e.txid, e.seq limit ${REPLAY_BATCH}`;

const POSITION_OF = 'select client_id, txid::text as txid, seq::text as seq from event where id = ? and reseller_id = ?';

/** Events one subscriber may have waiting before it is ended as too slow (it resumes from its last event id). */
const MAX_QUEUED = 1000;
/** How soon an event held back by an older transaction still running is looked at again. */
const HELD_RETRY_MS = 20;
/** How soon a failed read is tried again. */
const FAILED_RETRY_MS = 1000;

const positionOf = (row: { txid: string; seq: string }): EventPosition => ({ txid: BigInt(row.txid), seq: BigInt(row.seq) });
const after = (a: EventPosition, b: EventPosition): boolean => a.txid > b.txid || (a.txid === b.txid && a.seq > b.seq);
const toEvent = (row: EventRow): LiveEvent => ({
  id: row.id,
  type: row.type as EventType,
  resellerId: row.reseller_id,
  clientId: row.client_id,
  objectId: row.object_id,
  occurredAt: new Date(row.created_at),
  position: positionOf(row),
});

/** What one subscription asks for. */
export interface LiveFilter {
  types: readonly EventType[];
  /** The last event the subscriber saw (an `evt_…` id of its own): the stream starts after it. */
  after?: { id: string; param: string };
}

class Subscriber {
  readonly #queue: LiveEvent[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  readonly resellerId: string;
  readonly clientId: string | undefined;
  readonly types: ReadonlySet<string>;

  constructor(resellerId: string, clientId: string | undefined, types: ReadonlySet<string>) {
    this.resellerId = resellerId;
    this.clientId = clientId;
    this.types = types;
  }

  offer(event: LiveEvent): void {
    if (this.#ended || event.resellerId !== this.resellerId || !this.types.has(event.type)) return;
    if (this.clientId !== undefined && event.clientId !== this.clientId) return;
    // A subscriber that does not read its stream is ended, not buffered without bound: it resumes with its last event id.
    if (this.#queue.length >= MAX_QUEUED) return this.end();
    this.#queue.push(event);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** The next live event, or undefined once ended. */
  async next(): Promise<LiveEvent | undefined> {
    while (!this.#ended && this.#queue.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    this.#wake = undefined;
    return this.#ended ? undefined : this.#queue.shift();
  }
}

/**
 * The live events of one server process. Started on its first subscriber: the LISTEN connection is
 * made then, so a process (or a test) that never serves a subscription never opens it.
 */
export class LiveEvents {
  readonly #em: EntityManager;
  readonly #subscribers = new Set<Subscriber>();
  #cursor: EventPosition | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #pumpQueued = false;
  #retry: NodeJS.Timeout | undefined;
  #listener: Listener | undefined;
  #failing = false;
  #closed = false;
  #open = 0;

  readonly #log: Logger;
  readonly #options: { maxOpen: number; url: string };

  constructor(orm: MikroORM, log: Logger, options: { maxOpen: number; url: string }) {
    // Reads by SQL only (no identity map, no transaction): one entity manager serves them all.
    this.#em = orm.em.fork();
    this.#log = log;
    this.#options = options;
  }

  /** Open streams now (the bound is SUBSCRIPTIONS_MAX). */
  get open(): number {
    return this.#open;
  }

  /** Takes one of the process's stream places, or undefined when all are taken; the function gives it back (once). */
  admit(): (() => void) | undefined {
    if (this.#open >= this.#options.maxOpen) return undefined;
    this.#open++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#open--;
    };
  }

  /**
   * The caller's events of `filter.types`, from now on, or after the event it names. The caller's
   * reseller (and client, for a client-session caller) is the only one whose events it gets. An
   * `after` that is not one of those events is 400 `validation_error` naming its `param`.
   */
  async subscribe(ctx: Ctx, filter: LiveFilter): Promise<AsyncIterableIterator<LiveEvent>> {
    const { resellerId } = resellerOf(ctx);
    const clientId = clientSessionOf(ctx)?.clientId;
    const cursor = filter.after ? await this.#positionOf(resellerId, clientId, filter.after) : undefined;
    const subscriber = new Subscriber(resellerId, clientId, new Set(filter.types));
    if (this.#closed) subscriber.end();
    else await this.#add(subscriber);
    const stream = this.#stream(subscriber, cursor, filter.types);
    const remove = () => {
      this.#subscribers.delete(subscriber);
      subscriber.end();
    };
    // return() ends the subscriber first: a generator waiting for its next event (not at a yield)
    // would take a return() only when that event came. A stream never read is removed here too.
    const iterator: AsyncIterableIterator<LiveEvent> = {
      [Symbol.asyncIterator]: () => iterator,
      next: () => stream.next(),
      return: (value?: unknown) => {
        remove();
        return stream.return(value as undefined);
      },
      throw: (err?: unknown) => {
        remove();
        return stream.throw(err);
      },
    };
    return iterator;
  }

  /** Ends every open stream (the end of a graceful stop's drain, src/platform/shutdown.ts); later ones end at once. */
  endAll(): void {
    this.#closed = true;
    for (const subscriber of this.#subscribers) subscriber.end();
    this.#subscribers.clear();
  }

  async stop(): Promise<void> {
    this.endAll();
    clearTimeout(this.#retry);
    await this.#listener?.stop();
    await this.#chain;
  }

  async #positionOf(resellerId: string, clientId: string | undefined, ref: { id: string; param: string }): Promise<EventPosition> {
    const [row] = isId('event', ref.id)
      ? await preparedRead<{ client_id: string | null; txid: string; seq: string }>(this.#em, POSITION_OF, [ref.id, resellerId])
      : [];
    // Another reseller's event, or another client's for a client session, is unknown here: ids cannot be probed.
    if (!row || (clientId !== undefined && row.client_id !== clientId))
      throw validationError(ref.param, `'${ref.id}' is not an event of yours: send the id of the last event received`);
    return positionOf(row);
  }

  async *#stream(subscriber: Subscriber, from: EventPosition | undefined, types: readonly EventType[]): AsyncGenerator<LiveEvent> {
    let cursor = from;
    try {
      // What was missed, from the table, in order; the live events waiting meanwhile follow, past the last one replayed.
      while (cursor) {
        const rows = await preparedRead<EventRow>(this.#em, REPLAY, [
          subscriber.resellerId,
          types,
          subscriber.clientId ?? null,
          subscriber.clientId ?? null,
          String(cursor.txid),
          String(cursor.seq),
        ]);
        for (const row of rows) {
          const event = toEvent(row);
          cursor = event.position;
          yield event;
        }
        if (rows.length < REPLAY_BATCH) break;
      }
      for (;;) {
        const event = await subscriber.next();
        if (!event) return;
        if (cursor && !after(event.position, cursor)) continue;
        cursor = event.position;
        yield event;
      }
    } finally {
      this.#subscribers.delete(subscriber);
    }
  }

  /** Registers a subscriber between two reads, so the cursor it starts from is the reader's exactly. */
  async #add(subscriber: Subscriber): Promise<void> {
    if (!this.#listener) {
      this.#listener = listen({
        url: this.#options.url,
        channel: EVENT_CHANNEL,
        log: this.#log,
        notified: () => this.#wake(),
        connected: () => this.#wake(),
      });
    }
    await this.#listener.started;
    await this.#serially(async () => {
      // Without subscribers nothing was read: start at the table's end instead of delivering the backlog to nobody.
      if (this.#subscribers.size === 0 || !this.#cursor) this.#cursor = await this.#tail();
      this.#subscribers.add(subscriber);
    });
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #tail(): Promise<EventPosition> {
    const [row] = await preparedRead<{ txid: string; seq: string }>(this.#em, TAIL, []);
    return row ? positionOf(row) : { txid: 0n, seq: 0n };
  }

  /** A notification, a connection made, or a retry: read what is new, once, however many woke it meanwhile. */
  #wake(): void {
    if (this.#pumpQueued || this.#closed) return;
    this.#pumpQueued = true;
    clearTimeout(this.#retry);
    this.#serially(() => this.#pump()).catch((err: unknown) => {
      if (!this.#failing) this.#log.warn({ err }, 'live events: reading new events failed; retrying');
      this.#failing = true;
      this.#retryIn(FAILED_RETRY_MS);
    });
  }

  #retryIn(ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#wake(), ms);
  }

  async #pump(): Promise<void> {
    this.#pumpQueued = false;
    if (this.#subscribers.size === 0 || !this.#cursor) return;
    for (;;) {
      const cursor: EventPosition = this.#cursor;
      const rows = await preparedRead<EventRow>(this.#em, PUMP, [String(cursor.txid), String(cursor.seq)]);
      this.#failing = false;
      for (const row of rows) {
        // Everything after an event held back by an older transaction waits with it: the order is total.
        if (!row.ready) return this.#retryIn(HELD_RETRY_MS);
        const event = toEvent(row);
        this.#cursor = event.position;
        for (const subscriber of this.#subscribers) subscriber.offer(event);
      }
      if (rows.length < PUMP_BATCH) return;
    }
  }
}
