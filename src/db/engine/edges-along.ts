import pg from 'pg';

// A transaction's edges ride with its statements (docs/architecture.md "The data engine").
// MikroORM, through Kysely, sends `begin` on its own and waits for its answer before the
// transaction's first statement, and sends `commit` on its own after the last: two round trips
// through our process and PostgreSQL's protocol for every write, on a path where round trips are
// most of the cost (docs/adr/0019-edges-along.md).
//
// BEGIN: this client answers `begin` at once and sends it with the next statement in one
// extended-protocol exchange: BEGIN's Parse, Bind and Execute, then the statement's, then one Sync.
// PostgreSQL runs them in order (the statement inside the transaction) and answers both with one
// ReadyForQuery; an error in the statement skips nothing of BEGIN, and the transaction is then
// rolled back as after any failed statement. A statement without parameters may be several (a
// migration): BEGIN goes first on its own then. A transaction that ends before any statement sends
// neither its BEGIN nor its COMMIT or ROLLBACK.
//
// COMMIT: a statement whose text starts with WITH_COMMIT (the transaction's last writes, whose rows
// nothing reads: src/db/engine/prepared-read.ts) is answered at once with no rows and held; `commit`
// then sends it and COMMIT in one exchange (its Execute, COMMIT's, one Sync). If it fails,
// PostgreSQL skips COMMIT up to the Sync and the failure is COMMIT's answer: the caller rolls back,
// as after any failed COMMIT. `rollback` drops it unsent; any other statement sends it first, and
// fails with its failure.
//
// PIPELINED: statements given to this client while others are in flight go out at once, each with
// its own Sync (pg's pipeline mode), instead of each waiting for the previous one's answer: a use
// case's independent reads, issued together (src/db/engine/prepared-read.ts), take one round trip.
// PostgreSQL still runs them one after another in the order they came, so a read after a locking
// read runs under its lock; if one fails inside a transaction, those behind it fail with 25P02, as
// they would have after it. Statements this client sends only once an earlier one is answered
// (behind a BEGIN sent on its own, or behind a held statement sent first) hold back every later one
// until then, so the order they came in is the order PostgreSQL sees. A Submittable that keeps a
// portal open between exchanges (a cursor) cannot share a pipelined connection and is refused.

/** Marks a statement to send with the transaction's COMMIT (above): its rows are not read, its failure is COMMIT's. */
export const WITH_COMMIT = '/* sent with COMMIT */ ';

type Callback = (err: Error | null, result?: unknown) => void;

/** The protocol writes of pg's connection that Query.prepare uses (pg/lib/query.js). */
interface Wire {
  parse(message: { text: string; name?: string }): void;
  bind(message: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(message: { portal?: string; rows?: number }): void;
  sync(): void;
}

/** pg's internals a subclass of its Query reaches: not in its type declarations. */
interface QueryInternals {
  prepare(connection: Wire): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: unknown): void;
  _getRows(connection: Wire, rows: number | undefined): void;
}

const PgQuery = pg.Query as unknown as new (config: object, values: undefined, callback: Callback) => QueryInternals;

/** A statement without parameters, by Parse, Bind and Execute: it shares the exchange of the statement it rides with. */
function writeUnnamed(connection: Wire, text: string): void {
  connection.parse({ text, name: '' });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '', rows: 0 });
}

/** pg's Query for a statement with parameters, with BEGIN written ahead of it and BEGIN's CommandComplete not counted as its result. */
class AfterBegin extends PgQuery {
  #beginAnswered = false;

  override prepare(connection: Wire): void {
    writeUnnamed(connection, 'begin');
    super.prepare(connection);
  }

  override handleCommandComplete(message: unknown, connection: unknown): void {
    if (!this.#beginAnswered) {
      this.#beginAnswered = true;
      return;
    }
    super.handleCommandComplete(message, connection);
  }
}

/**
 * pg's Query for a held statement followed by COMMIT (and preceded by BEGIN when that is held too),
 * in one exchange; its result is COMMIT's. The statement's rows are not kept.
 */
class WithCommit extends PgQuery {
  readonly #begin: boolean;
  #answersBeforeCommit: number;

  constructor(config: object, begin: boolean, callback: Callback) {
    super(config, undefined, callback);
    this.#begin = begin;
    this.#answersBeforeCommit = begin ? 2 : 1;
  }

  override prepare(connection: Wire): void {
    if (this.#begin) writeUnnamed(connection, 'begin');
    super.prepare(connection);
  }

  // pg's Query ends its prepare with Execute and Sync here: COMMIT goes between them.
  override _getRows(connection: Wire, rows: number | undefined): void {
    connection.execute({ portal: '', rows });
    writeUnnamed(connection, 'commit');
    connection.sync();
  }

  override handleRowDescription(): void {}
  override handleDataRow(): void {}

  override handleCommandComplete(message: unknown, connection: unknown): void {
    if (this.#answersBeforeCommit > 0) {
      this.#answersBeforeCommit--;
      return;
    }
    super.handleCommandComplete(message, connection);
  }
}

/** What pg answers for a statement that returns no rows. */
const answered = (command: string) => ({ command, rowCount: null, oid: null, rows: [], fields: [] });

type Send = (...a: unknown[]) => never;

const isSubmittable = (config: unknown) => typeof (config as { submit?: unknown } | null)?.submit === 'function';

/** A call pg answers its own way, not with a promise: with a callback, or through the Submittable given. */
const answeredByPg = ([config, values, callback]: unknown[]) =>
  callback !== undefined || typeof values === 'function' || isSubmittable(config);

/** A pg client that holds `begin` back until the transaction's next statement, a WITH_COMMIT statement until `commit`, and pipelines what it is given (above). */
export class EdgesAlongClient extends pg.Client {
  #beginHeld = false;
  /** A WITH_COMMIT statement's query config, waiting for COMMIT. */
  #held: object | undefined;
  /** Settles once the statements sent only after an earlier one's answer (#after), and those waiting behind them, have settled; later ones wait for it. */
  #behind: Promise<unknown> | undefined;
  /** Whether the socket is corked for this turn of the event loop (#corkTurn). */
  #corked = false;

  constructor(config?: string | pg.ClientConfig) {
    // Set after pg's constructor, not through a copy of `config`: pg-pool hides its password from enumeration.
    super(config);
    (this as { pipeline: boolean }).pipeline = true;
  }

  // One signature for pg's many overloads: typed `never` so it stands for each of them; it returns
  // whatever pg's own query returns for these arguments (a promise, or nothing with a callback).
  override query(...args: unknown[]): never {
    const [config] = args;
    if (isSubmittable(config) && !(config instanceof pg.Query)) {
      throw new Error('EdgesAlongClient pipelines its statements: a Submittable of its own (a cursor) needs a client of its own');
    }
    this.#corkTurn();
    if (this.#behind !== undefined) return this.#waitBehind(this.#behind, args);
    return this.#dispatch(super.query.bind(this) as Send, args);
  }

  /**
   * What this client writes in one turn of the event loop reaches the socket in one write: pg writes
   * each statement on its own (its Query corks and uncorks the socket around it), so three
   * statements pipelined together were three writes, each a system call and, on loopback, the
   * receiving side's work too (docs/adr/0019-edges-along.md). The socket is uncorked once the turn's
   * synchronous code and queued callbacks are done (process.nextTick), so nothing waits longer.
   */
  #corkTurn(): void {
    const stream = (this as unknown as { connection: { stream?: { cork(): void; uncork(): void } } }).connection.stream;
    if (this.#corked || stream === undefined) return;
    this.#corked = true;
    stream.cork();
    process.nextTick(() => {
      this.#corked = false;
      stream.uncork();
    });
  }

  /** What this client does with a statement once nothing it waits behind is pending. */
  #dispatch(send: Send, args: unknown[]): never {
    // A callback, or a pg Query given as a Submittable: pg's way, after what is held.
    if (answeredByPg(args)) return this.#afterHeld(send, args);
    const [config, values] = args;
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const params = typeof config === 'string' ? values : (config as { values?: unknown } | null)?.values;
    const noParams = params === undefined || (Array.isArray(params) && params.length === 0);
    const word = typeof text === 'string' && noParams ? text.trim().toLowerCase() : undefined;
    // Held only inside a transaction (outside one no COMMIT comes), and one at a time (a second is sent as it comes, after the first).
    if (typeof text === 'string' && text.startsWith(WITH_COMMIT) && this.#held === undefined && this.#inTransaction()) {
      this.#held = typeof config === 'string' ? { text, values: params } : { ...(config as object) };
      return Promise.resolve(answered('SELECT')) as never;
    }
    if (this.#held !== undefined) {
      if (word === 'commit') return this.#commitHeld(send);
      if (word === 'rollback') {
        this.#held = undefined;
        if (this.#beginHeld) {
          this.#beginHeld = false;
          return Promise.resolve(answered('ROLLBACK')) as never;
        }
        return this.#rollback(send, args);
      }
      return this.#afterHeld(send, args);
    }
    if (word === 'begin') {
      this.#beginHeld = true;
      return Promise.resolve(answered('BEGIN')) as never;
    }
    if (!this.#beginHeld) return word === 'rollback' ? this.#rollback(send, args) : send(...args);
    if (word === 'commit' || word === 'rollback') {
      this.#beginHeld = false;
      return Promise.resolve(answered(word.toUpperCase())) as never;
    }
    if (noParams || typeof text !== 'string') {
      this.#beginHeld = false;
      return this.#afterBegin(send, args);
    }
    return this.#sendNow(send, typeof config === 'string' ? { text, values: params } : { ...(config as object) }) as never;
  }

  /**
   * ROLLBACK, sent. If it fails, the connection is broken (or in a state nothing can trust): it is
   * marked unusable, so the pool discards it on release, and the rollback is answered, PostgreSQL
   * rolling back the transaction of a connection that ends. Failing it left the connection checked
   * out for good: Kysely releases a transaction's connection only after its rollback succeeded, so
   * each connection the database dropped mid-transaction took a place of the pool until a restart.
   */
  #rollback(send: Send, args: unknown[]): never {
    return (send(...args) as unknown as Promise<unknown>).catch(() => {
      (this as unknown as { _queryable: boolean })._queryable = false;
      return answered('ROLLBACK');
    }) as never;
  }

  /** Whether a transaction is open: BEGIN held, or PostgreSQL's last ReadyForQuery said so (pg keeps its status). */
  #inTransaction(): boolean {
    return this.#beginHeld || (this as unknown as { _txStatus?: string | null })._txStatus === 'T';
  }

  /** The held statement, then COMMIT (after BEGIN if still held), in one exchange; COMMIT's answer, or the first failure. */
  #commitHeld(send: Send): never {
    const held = this.#held!;
    const begin = this.#beginHeld;
    this.#held = undefined;
    this.#beginHeld = false;
    return new Promise((resolve, reject) => {
      send(new WithCommit(held, begin, (err, result) => (err ? reject(err) : resolve(result))));
    }) as never;
  }

  /** A call this client does not merge: what is held is sent first, on its own (pg sends its queue in order), and its failure is this call's. */
  #afterHeld(send: Send, args: unknown[]): never {
    const held = this.#held;
    if (held === undefined) {
      if (!this.#beginHeld) return send(...args);
      this.#beginHeld = false;
      return this.#afterBegin(send, args);
    }
    this.#held = undefined;
    return this.#after(this.#sendNow(send, held), send, args);
  }

  /** A statement with parameters sent now: with a held BEGIN ahead of it if there is one. */
  #sendNow(send: Send, query: object): Promise<unknown> {
    if (!this.#beginHeld) return send(query) as unknown as Promise<unknown>;
    this.#beginHeld = false;
    return new Promise((resolve, reject) => {
      send(new AfterBegin(query, undefined, (err, result) => (err ? reject(err) : resolve(result))));
    });
  }

  #afterBegin(send: Send, args: unknown[]): never {
    return this.#after(send('begin') as unknown as Promise<unknown>, send, args);
  }

  /** `args` sent once `first` (already sent) has succeeded; its failure fails them too. Later statements wait behind it (#behind). */
  #after(first: Promise<unknown>, send: Send, args: unknown[]): never {
    if (answeredByPg(args)) {
      // pg answers these its own way (a callback, the Submittable itself): sent right behind it, in
      // order; in a transaction its failure fails them too (25P02).
      first.catch(() => undefined);
      return send(...args);
    }
    const sent = first.then(() => send(...args));
    this.#keepBehind(sent);
    return sent as never;
  }

  /** `args` handled once `behind` has settled (both ways: its failure is its caller's). */
  #waitBehind(behind: Promise<unknown>, args: unknown[]): never {
    const again = () => this.#dispatch(super.query.bind(this) as Send, args) as unknown;
    if (answeredByPg(args)) {
      // Answered through the callback or the Submittable, as pg does; pg returns the Submittable, or nothing.
      this.#keepBehind(behind.then(again, again));
      const [config] = args;
      return (isSubmittable(config) ? config : undefined) as never;
    }
    const sent = behind.then(again, again);
    this.#keepBehind(sent);
    return sent as never;
  }

  /** Later statements wait for `sent` to settle, and for whatever they waited for already. */
  #keepBehind(sent: Promise<unknown>): void {
    const quiet = sent.then(
      () => undefined,
      () => undefined,
    );
    const settled = this.#behind === undefined ? quiet : Promise.all([this.#behind, quiet]).then(() => undefined);
    this.#behind = settled;
    void settled.then(() => {
      if (this.#behind === settled) this.#behind = undefined;
    });
  }
}
