import pg from 'pg';

// BEGIN rides with the transaction's first statement (README "What replaces a part of a
// dependency"). MikroORM, through Kysely, sends `begin` on its own and waits for its answer before
// the transaction's first statement: a round trip through our process and PostgreSQL's protocol
// for every write, on a path where round trips are most of the cost (bench/README.md "Bookings").
// This client answers `begin` at once and sends it with the next statement in one extended-protocol
// exchange: BEGIN's Parse, Bind and Execute, then the statement's, then one Sync. PostgreSQL runs
// them in order (the statement inside the transaction) and answers both with one ReadyForQuery; an
// error in the statement skips nothing of BEGIN, and the transaction is then rolled back as after any
// failed statement. BEGIN still executes and is still a statement at the wire. A statement without
// parameters may be several (a migration): BEGIN goes first on its own then. A transaction that
// ends before any statement sends neither its BEGIN nor its COMMIT or ROLLBACK.

type Callback = (err: Error | null, result?: unknown) => void;

/** The protocol writes of pg's connection that Query.prepare uses (pg/lib/query.js). */
interface Wire {
  parse(message: { text: string; name?: string }): void;
  bind(message: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(message: { portal?: string; rows?: number }): void;
}

/** pg's internals a subclass of its Query reaches: not in its type declarations. */
interface QueryInternals {
  prepare(connection: Wire): void;
  handleCommandComplete(message: unknown, connection: unknown): void;
}

const PgQuery = pg.Query as unknown as new (config: object, values: undefined, callback: Callback) => QueryInternals;

/** pg's Query for a statement with parameters, with BEGIN written ahead of it and BEGIN's CommandComplete not counted as its result. */
class AfterBegin extends PgQuery {
  #beginAnswered = false;

  override prepare(connection: Wire): void {
    connection.parse({ text: 'begin', name: '' });
    connection.bind({ portal: '', statement: '', values: [] });
    connection.execute({ portal: '', rows: 0 });
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

/** What pg answers for a statement that returns no rows. */
const answered = (command: string) => ({ command, rowCount: null, oid: null, rows: [], fields: [] });

/** A pg client that holds `begin` back until the transaction's next statement (above). */
export class BeginAlongClient extends pg.Client {
  #beginHeld = false;

  // One signature for pg's many overloads: typed `never` so it stands for each of them; it returns
  // whatever pg's own query returns for these arguments (a promise, or nothing with a callback).
  override query(...args: unknown[]): never {
    const send = super.query.bind(this) as (...a: unknown[]) => never;
    const [config, values, callback] = args;
    // A callback, or a Submittable of its own (a cursor): pg's way, after a held BEGIN sent on its own.
    const submittable = typeof (config as { submit?: unknown } | null)?.submit === 'function';
    if (callback !== undefined || typeof values === 'function' || submittable) return this.#afterHeldBegin(send, args);
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const params = typeof config === 'string' ? values : (config as { values?: unknown } | null)?.values;
    const noParams = params === undefined || (Array.isArray(params) && params.length === 0);
    const word = typeof text === 'string' && noParams ? text.trim().toLowerCase() : undefined;
    if (word === 'begin') {
      this.#beginHeld = true;
      return Promise.resolve(answered('BEGIN')) as never;
    }
    if (!this.#beginHeld) return send(...args);
    this.#beginHeld = false;
    if (word === 'commit' || word === 'rollback') return Promise.resolve(answered(word.toUpperCase())) as never;
    if (noParams || typeof text !== 'string') return this.#afterBegin(send, args);
    const query = typeof config === 'string' ? { text, values: params } : { ...(config as object) };
    return new Promise((resolve, reject) => {
      send(new AfterBegin(query, undefined, (err, result) => (err ? reject(err) : resolve(result))));
    }) as never;
  }

  /** A call this client does not merge: a held BEGIN is sent first, on its own (pg sends its queue in order). */
  #afterHeldBegin(send: (...a: unknown[]) => never, args: unknown[]): never {
    if (!this.#beginHeld) return send(...args);
    this.#beginHeld = false;
    return this.#afterBegin(send, args);
  }

  #afterBegin(send: (...a: unknown[]) => never, args: unknown[]): never {
    const begun = send('begin') as unknown as Promise<unknown>;
    const [config, values, callback] = args;
    if (callback !== undefined || typeof values === 'function' || typeof (config as { submit?: unknown } | null)?.submit === 'function') {
      // pg answers these its own way (a callback, the Submittable itself): queued behind BEGIN, in order.
      begun.catch(() => undefined); // its failure fails the statement queued behind it too
      return send(...args);
    }
    return begun.then(() => send(...args)) as never;
  }
}
