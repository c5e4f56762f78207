import { listen, type Listener } from './listener.ts';
import type { Logger } from './logger.ts';

// Catalogue rows a process keeps between requests (docs/adr/0032-catalogue-rows-kept-by-process.md):
// rows only the catalogue import writes (providers), which nearly every request showing a booking
// reads by id; a statement a field waits on is among the dearest parts of a GraphQL read (the record
// has the measurement).
//
// - **Kept until the table changes.** A statement-level trigger on each kept table NOTIFYs
//   `catalogue_changed` with the table's name in the transaction that writes it, whatever writes it
//   (the import, an operator's SQL); one connection per process LISTENs (src/platform/listener.ts)
//   and a notification forgets that table's rows. A change is seen once its notification has
//   arrived: moments after its COMMIT.
// - **Nothing kept while no one listens.** Until the first connection listens, and from the moment
//   it is lost until it is made again, rows are read and not kept, and everything kept before is
//   forgotten: a notification missed meanwhile cannot leave an old row behind.
// - **No old row kept after a change.** A read that began before a notification arrived may hold
//   the old row: it is handed to its own request, but not kept (a read keeps into the table's rows as
//   they were when it began, and a notification sets the table's rows anew, so those are read by no one).
// - **At most MAX_AGE_MS old.** A connection a network drops without a word (a firewall's idle
//   timeout) would leave notifications unheard and the loss unnoticed: a kept row is read again a
//   minute after it was read, whatever was heard.
// - **Bounded.** At most MAX_ROWS rows per table; a full table's rows are forgotten (read again).
// The reads stay on the primary (src/graphql/loaders.ts): a replica could answer a row older than
// the notification that announced it.

const CATALOGUE_CHANNEL = 'catalogue_changed';
/**
 * The tables whose every change is notified (the `catalogue_changed_notify` trigger of
 * Migration20261130000600_catalogue_changed): the only ones whose rows may be kept. A table without
 * the trigger is never kept, whatever a loader asks.
 */
export const KEPT_TABLES: ReadonlySet<string> = new Set(['provider']);
const MAX_ROWS = 10_000;
const MAX_AGE_MS = 60_000;

/** One table's kept rows, as a read sees them from when it began. */
export interface Shelf<T extends { id: string }> {
  get(id: string): T | undefined;
  /** Keeps rows this read found, unless the table changed (or the listener was lost) since the read began. */
  keep(rows: readonly T[]): void;
}

export class CatalogueCache {
  readonly #url: string;
  readonly #log: Logger;
  readonly #heard: (table: string) => void;
  readonly #maxAgeMs: number;
  readonly #maxRows: number;
  readonly #tables = new Map<string, Map<string, { row: object; until: number }>>();
  #listener: Listener | undefined;
  #listening = false;

  /**
   * `heard` is told of every notification, with the kept table it names (the `catalogue_changes_heard_total`
   * metric). `maxAgeMs` and `maxRows` are MAX_AGE_MS and MAX_ROWS unless told (test/platform/catalogue-cache.test.ts
   * holds the rules to smaller ones).
   */
  constructor(opts: { url: string; log: Logger; heard?: (table: string) => void; maxAgeMs?: number; maxRows?: number }) {
    this.#url = opts.url;
    this.#log = opts.log;
    this.#heard = opts.heard ?? (() => undefined);
    this.#maxAgeMs = opts.maxAgeMs ?? MAX_AGE_MS;
    this.#maxRows = opts.maxRows ?? MAX_ROWS;
  }

  /** Whether rows are kept now: the process's connection listens (the `catalogue_listening` metric). */
  get listening(): boolean {
    return this.#listening;
  }

  /** Starts listening (once); resolves when the first connection listens or failed once (it is retried). */
  start(): Promise<void> {
    this.#listener ??= listen({
      url: this.#url,
      channel: CATALOGUE_CHANNEL,
      name: 'catalogue listener',
      log: this.#log,
      notified: (table) => {
        // A payload naming no kept table (a NOTIFY sent by hand) forgets nothing.
        this.#forget(table);
        this.#heard(KEPT_TABLES.has(table) ? table : 'other');
      },
      connected: () => {
        this.#forget();
        this.#listening = true;
      },
      lost: () => {
        this.#listening = false;
        this.#forget();
      },
    });
    return this.#listener.started;
  }

  async stop(): Promise<void> {
    this.#listening = false;
    this.#forget();
    await this.#listener?.stop();
  }

  /** `table`'s kept rows for a read beginning now; undefined while nothing may be kept (no connection listens, or a table without the trigger). */
  shelf<T extends { id: string }>(table: string): Shelf<T> | undefined {
    if (!KEPT_TABLES.has(table)) return undefined;
    if (!this.#listening) {
      void this.start();
      return undefined;
    }
    // This read's rows: a notification or a loss sets new ones in their place, so whatever it keeps
    // after that is kept where no read looks.
    let rows = this.#tables.get(table);
    if (!rows) this.#tables.set(table, (rows = new Map()));
    const kept = rows as Map<string, { row: T; until: number }>;
    // Process time, not the domain clock (which tests move).
    const now = performance.now();
    return {
      get: (id) => {
        const entry = kept.get(id);
        return entry && entry.until > now ? entry.row : undefined;
      },
      keep: (found) => {
        if (found.length === 0) return;
        if (kept.size + found.length > this.#maxRows) kept.clear();
        // Shared by every request from now on. Plain rows are readonly to the compiler; the one write
        // they take is node(id:)'s type brand (src/graphql/builder.ts), the same for every request, so
        // they are not frozen (a frozen row refuses it).
        for (const row of found) kept.set(row.id, { row, until: now + this.#maxAgeMs });
      },
    };
  }

  /** Forgets one table's rows (a notification names it), or every table's. */
  #forget(table?: string): void {
    if (table === undefined) this.#tables.clear();
    else this.#tables.delete(table);
  }
}
