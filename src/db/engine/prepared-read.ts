import { createHash } from 'node:crypto';
import pg from 'pg';
import { CompiledQuery, type DatabaseConnection, type Kysely, type QueryResult, type Transaction } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EdgesAlongClient, WITH_COMMIT } from './edges-along.ts';
import { refusalOf } from '../../platform/errors.ts';
import { isTuned } from './mode.ts';
import type { ConnectionType } from './replicas.ts';

// The hottest statements (the pass lists, a booking's reads and its raw writes: docs/architecture.md "Request
// pipeline", docs/adr/0015-prepared-statements-and-joined-reads.md) as named prepared statements. MikroORM sends every statement as text
// with its values inlined, so PostgreSQL parses and plans each one anew; a prepared statement is
// parsed once per connection and its plan reused, and its values (an event's JSON payload, say)
// travel as parameters, not as SQL text.

interface Prepared {
  name: string;
  text: string;
}
const preparedBySql = new Map<string, Prepared>();
/** Statement texts ($1 placeholders) that run as named statements, by text. */
const namesByText = new Map<string, string>();

/**
 * The `pg` client of the ORM's pool (ormOptions, src/db/orm.ts): a text preparedRead registered
 * runs as its named statement on whichever path it comes, the pool's or a transaction's (Kysely
 * hands its statements to `client.query(text, values)`); anything else runs as before. A
 * transaction's BEGIN rides with its first statement, and its last statement (lastWriteWithCommit)
 * with its COMMIT (src/db/engine/edges-along.ts).
 */
export class PreparingClient extends EdgesAlongClient {
  // One signature for pg's many overloads: typed `never` so it stands for each of them; it returns
  // whatever pg's own query returns for these arguments (a promise, or nothing with a callback).
  override query(...args: unknown[]): never {
    return asNamed(super.query.bind(this) as (...a: unknown[]) => never, args);
  }
}

/**
 * The same without edges-along.ts: pg's own client in its public pipeline mode (the pool option
 * `pipeline: true`), to measure what edges-along.ts adds (DB_ENGINE_WITHOUT=edges-along, README.md
 * in this folder).
 */
export class PreparingPipelineClient extends pg.Client {
  override query(...args: unknown[]): never {
    return asNamed(super.query.bind(this) as (...a: unknown[]) => never, args);
  }
}

/** A registered text with values, as its named statement; anything else as given. */
function asNamed(call: (...a: unknown[]) => never, args: unknown[]): never {
  const [text, values, callback] = args;
  const name = typeof text === 'string' && Array.isArray(values) ? namesByText.get(text) : undefined;
  return name === undefined ? call(...args) : call({ name, text, values }, callback);
}

/**
 * A statement's text from a template (`sqlText\`select ${columns} from …\``), kept per place in
 * the code and per value of its parts: the same text object each time. A text built anew on every
 * call (a select list of 30 joined columns) was flattened and hashed anew to find its prepared
 * statement's name, a share of a booking's CPU worth saving. Its parts are fixed texts (select lists, a choice of
 * WHERE clauses), never input: at most 16 kept per place, any more are built each time.
 */
export function sqlText(strings: TemplateStringsArray, ...parts: readonly string[]): string {
  let known = textsByTemplate.get(strings);
  if (!known) textsByTemplate.set(strings, (known = []));
  for (const k of known) if (k.parts.every((part, i) => part === parts[i])) return k.text;
  let text = strings[0]!;
  for (let i = 0; i < parts.length; i++) text += parts[i]! + strings[i + 1]!;
  if (known.length < 16) known.push({ parts, text });
  return text;
}
const textsByTemplate = new WeakMap<TemplateStringsArray, { parts: readonly string[]; text: string }[]>();

/**
 * Runs a read (`?` placeholders, as for em.execute) as a named prepared statement, logged through
 * the ORM's logger like any statement: on the ORM's pool, or inside a transaction on its
 * connection. The SQL must be one of a few fixed texts (values only as parameters): each distinct
 * text is prepared on every connection once. Values bind as `pg` binds them (no array expansion).
 * Writes queued in the transaction (queueWrite) go first, in a statement of their own issued just
 * before it, so the read sees them; with `carriesQueued` they go in this statement instead, for a
 * statement that does not read what they write. Either way the statement is issued during the call
 * (no await comes first), so statements a use case issues together run in the order of its calls: a
 * read issued right after a locking read runs under that lock ("Statements issued together go
 * together" below).
 */
export async function preparedRead<T extends object>(
  em: EntityManager,
  sql: string,
  params: readonly unknown[],
  { carriesQueued = false, connectionType = 'write' }: { carriesQueued?: boolean; connectionType?: ConnectionType } = {},
): Promise<T[]> {
  if (!isTuned(em)) return sendPlain<T>(em, sql, params, connectionType);
  // A transaction's statements go to its connection whatever is asked; only a read outside one reaches a replica.
  const connection = em.getConnection(connectionType);
  const transaction = em.getTransactionContext<Transaction<unknown>>();
  const queued = (transaction && queues.get(transaction)?.splice(0)) || [];
  if (queued.length === 0) return send<T>(connection, transaction, sql, params);
  if (carriesQueued && !queued.some((w) => names(sql, w.table))) {
    return send<T>(connection, transaction, withWrites(queued, sql), [...queued.flatMap((w) => w.params), ...params]);
  }
  // The writes, then the read, both issued now: one round trip, run in that order. The writes' failure is the one told.
  const [written, read] = await Promise.allSettled([
    sendWrites(connection, transaction!, queued),
    send<T>(connection, transaction, sql, params),
  ]);
  if (written.status === 'rejected') throw written.reason;
  if (read.status === 'rejected') throw read.reason;
  return read.value;
}

/**
 * The transaction's last statement (`?` placeholders), sent with its COMMIT in one exchange
 * (src/db/engine/edges-along.ts), carrying the queued writes (preparedRead's `carriesQueued`): for
 * the end of a use case, by the code that ends its transaction, when nothing reads its rows. It
 * does not fail here: its failure is COMMIT's, and the transaction rolls back. Nothing may be sent
 * in the transaction after it but COMMIT (anything else sends it first, and fails with it).
 */
export async function lastWriteWithCommit(em: EntityManager, sql: string, params: readonly unknown[]): Promise<void> {
  if (!isTuned(em)) {
    await preparedWrite(em, sql, params);
    return;
  }
  const transaction = em.getTransactionContext<Transaction<unknown>>();
  if (!transaction) throw new Error('a statement sent with COMMIT needs an open transaction');
  const queued = queues.get(transaction)?.splice(0) ?? [];
  if (queued.some((w) => names(sql, w.table))) await sendWrites(em.getConnection(), transaction, queued.splice(0));
  await sendWithCommit(em, transaction, queued, sql, params);
}

/** The queued writes as the transaction's last statement, sent with its COMMIT (lastWriteWithCommit); nothing when none are queued. */
export async function queuedWritesWithCommit(em: EntityManager): Promise<void> {
  const transaction = em.getTransactionContext<Transaction<unknown>>();
  const queued = (transaction && queues.get(transaction)?.splice(0)) || [];
  const last = queued.pop();
  if (last) await sendWithCommit(em, transaction!, queued, last.sql, last.params);
}

/** `sql` carrying `writes` as its first CTEs (their values first), marked to go with COMMIT (src/db/engine/edges-along.ts). */
async function sendWithCommit(
  em: EntityManager,
  transaction: Transaction<unknown>,
  writes: readonly QueuedWrite[],
  sql: string,
  params: readonly unknown[],
): Promise<void> {
  await send(em.getConnection(), transaction, withWrites(writes, sql, WITH_COMMIT), [...writes.flatMap((w) => w.params), ...params]);
}

type Connection = ReturnType<EntityManager['getConnection']>;

/** MikroORM's connection, with the parts `send` logs through (not in its type declarations). */
interface Logging {
  logQuery(query: string, context: object): void;
  logger: { isEnabled(namespace: string): boolean };
  config: { get(key: 'slowQueryThreshold'): number | undefined };
}

/**
 * MikroORM's connection, to log through, when its logger takes statements (debug logging, the
 * tests' statement count); else undefined: building the entry for a logger that drops it showed in
 * a booking's profile.
 */
function logs(connection: Connection): Logging | undefined {
  const logging = connection as unknown as Logging;
  return logging.logger.isEnabled('query') || logging.config.get('slowQueryThreshold') !== undefined ? logging : undefined;
}

/** Logs a statement sent without its own log entry (a transaction's edges: src/db/engine/transaction.ts) as MikroORM logs its own. */
export function logStatement(em: EntityManager, text: string): void {
  logs(em.getConnection())?.logQuery(text, {});
}

/**
 * The plain engine's statement (DB_ENGINE=plain): through Kysely's public `executeQuery`, on the
 * transaction MikroORM holds, or on its pool; unnamed, one at a time, each awaited where it is
 * issued. Values bind as the tuned path binds them (pg's own conversion), so both run the same SQL.
 */
async function sendPlain<T extends object>(
  em: EntityManager,
  sql: string,
  params: readonly unknown[],
  connectionType: ConnectionType,
): Promise<T[]> {
  const { text } = prepare(sql, params.length);
  const executor = em.getTransactionContext<Transaction<unknown>>() ?? em.getConnection(connectionType).getClient<Kysely<unknown>>();
  const logger = em.config.getLogger();
  const started = performance.now();
  try {
    const { rows } = await executor.executeQuery<T>(CompiledQuery.raw(text, [...params]));
    if (logger.isEnabled('query')) logger.logQuery({ query: text, took: Math.round(performance.now() - started), results: rows.length });
    return rows;
  } catch (err) {
    throw refusalOf(err) ?? err;
  }
}

async function send<T extends object>(
  connection: Connection,
  transaction: Transaction<unknown> | undefined,
  sql: string,
  params: readonly unknown[],
): Promise<T[]> {
  const { text } = prepare(sql, params.length);
  // Through the logger MikroORM's own statements take, when it takes them.
  const logging = logs(connection);
  const started = logging ? performance.now() : 0;
  const values = [...params];
  let rows: T[];
  try {
    rows = transaction
      ? (await onItsConnection<T>(transaction, CompiledQuery.raw(text, values))).rows
      : (await (await connection.getNativeClient()).query<T>(text, values)).rows;
  } catch (err) {
    // A refusal the database makes (an overdraft once checks are settled: src/db/engine/transaction.ts) is a catalogue error.
    throw refusalOf(err) ?? err;
  }
  logging?.logQuery(text, { took: Math.round(performance.now() - started), results: rows.length });
  return rows;
}

// ---- Statements issued together go together ---------------------------------------------------
//
// A use case's reads that do not depend on each other are issued together (Promise.all: a class
// booking's instance, client and already-booked check). Kysely hands a transaction's connection to
// one statement at a time, each after the previous one's answer: a round trip each. Ours go to the
// connection itself, taken from Kysely once per transaction, as they are issued; its client
// pipelines them (PostgreSQL runs them in the order they came: src/db/engine/edges-along.ts), so
// statements issued together take one round trip, and corks its socket for the turn of the event
// loop, so they leave in one write. Statements issued before the connection is known wait for it
// in the order they were issued. MikroORM's own statements still go through Kysely, to the same
// client, whose queue keeps them in the order issued.

interface Provided {
  ready: Promise<DatabaseConnection>;
  connection?: DatabaseConnection;
}
const provided = new WeakMap<object, Provided>();

function onItsConnection<T>(transaction: Transaction<unknown>, query: CompiledQuery): Promise<QueryResult<T>> {
  let held = provided.get(transaction);
  if (!held) {
    const ready = transaction.getExecutor().provideConnection(async (connection) => connection);
    const made: Provided = (held = { ready });
    provided.set(transaction, made);
    // Registered first, so it runs before the statements waiting on `ready`, and any issued after it go straight.
    ready.then(
      (connection) => {
        made.connection = connection;
      },
      () => {},
    );
  }
  return held.connection ? held.connection.executeQuery<T>(query) : held.ready.then((connection) => connection.executeQuery<T>(query));
}

/**
 * A raw write (an UPDATE, an INSERT or a locking SELECT, with its RETURNING rows; `?` placeholders)
 * as a named prepared statement in the caller's transaction: preparedRead's rules, and only inside a
 * transaction (balances, counters, ledgers and the outbox change with the use case's effects, or
 * not at all). A value's type comes from where it lands (a column, a comparison); where nothing
 * says it, the SQL casts it (`?::int`).
 */
export async function preparedWrite<T extends object>(
  em: EntityManager,
  sql: string,
  params: readonly unknown[],
  options: { carriesQueued?: boolean } = {},
): Promise<T[]> {
  if (!em.isInTransaction()) throw new Error('balances, counters, ledgers and the outbox change only inside a transaction');
  return preparedRead<T>(em, sql, params, options);
}

// ---- Writes sent with a later statement ------------------------------------------------------
//
// A booking ends in writes whose results nothing reads (the spot taken, the booking's INSERT, the
// session marked used, the event and its outbox row): each was a round trip through our process
// and PostgreSQL's protocol, on a path where the round trips are most of the cost (bench/README.md
// "Bookings"). Queued, they go together as data-modifying CTEs of one statement: the idempotency
// record's (carriesQueued), or else one of their own before the next prepared statement, before a
// savepoint and at the end of the use case (src/db/engine/transaction.ts flushes them there), and
// before any statement of MikroORM's own (src/db/engine/driver.ts).
// PostgreSQL runs every data-modifying CTE of a statement exactly once, to completion, whether the
// statement reads its rows or not; foreign keys and CHECKs are checked at the end of the statement.

interface QueuedWrite {
  sql: string;
  params: readonly unknown[];
  table: string;
  changesRows: boolean;
}

/** The queue of each open transaction (by its Kysely transaction) that something flushes before COMMIT. */
const queues = new WeakMap<object, QueuedWrite[]>();

const queuedOf = (em: EntityManager): QueuedWrite[] | undefined => {
  const transaction = em.getTransactionContext<object>();
  return transaction ? queues.get(transaction) : undefined;
};

/**
 * A write (one INSERT, UPDATE or DELETE without WITH or RETURNING; `?` placeholders) sent with the
 * transaction's next statement, or at once where no queue is open (openWriteQueue). For a write
 * whose effect nothing in the use case reads before it ends, and whose failure can only mean a
 * broken invariant: an error surfaces at the statement that carries it, and rolls the whole
 * transaction back like any other.
 *
 * One statement sees one snapshot, and PostgreSQL applies only one of two changes to a row made in
 * one statement: an UPDATE or DELETE of a table the queue already writes sends the queue first, and
 * a carrier that names a table the queue writes does not carry it. A full queue is sent first too.
 */
export async function queueWrite(em: EntityManager, sql: string, params: readonly unknown[]): Promise<Deferred> {
  const target = targetOf(sql);
  const queue = queuedOf(em);
  if (!queue) {
    await preparedWrite(em, sql, params);
    return DEFERRED;
  }
  if (queue.length >= MAX_QUEUED_WRITES || (target.changesRows && queue.some((w) => w.table === target.table))) await flushQueuedWrites(em);
  queue.push({ sql, params, ...target });
  return DEFERRED;
}

/**
 * What queueWrite answers: not rows, not a count, not "done". The write may not have been sent yet;
 * it happens, or fails and rolls its transaction back, by the time the transaction commits.
 */
export interface Deferred {
  readonly happens: 'by COMMIT';
}
const DEFERRED: Deferred = Object.freeze({ happens: 'by COMMIT' });

/**
 * At most this many go in one statement (a booking queues 4 or 5): a sweep that records an event
 * per row would otherwise send one statement of hundreds of CTEs, and each count of them would be
 * a prepared statement of its own on every connection.
 */
const MAX_QUEUED_WRITES = 8;

const targets = new Map<string, { table: string; changesRows: boolean }>();

/** The table a queued write writes, and whether it changes rows that exist (an UPDATE or DELETE). */
function targetOf(sql: string): { table: string; changesRows: boolean } {
  let target = targets.get(sql);
  if (!target) {
    const statement = /^\s*(insert\s+into|update|delete\s+from)\s+([a-z_][a-z0-9_]*)\b/i.exec(sql);
    if (!statement || /\breturning\b/i.test(sql)) throw new Error('queueWrite: one INSERT, UPDATE or DELETE, without WITH or RETURNING');
    target = { table: statement[2].toLowerCase(), changesRows: !/^insert/i.test(statement[1]) };
    targets.set(sql, target);
  }
  return target;
}

/** Whether `sql` names `table` (a word of its text): conservative, a column of that name counts too. */
function names(sql: string, table: string): boolean {
  let word = tableWords.get(table);
  if (!word) tableWords.set(table, (word = new RegExp(`\\b${table}\\b`, 'i')));
  return word.test(sql);
}
const tableWords = new Map<string, RegExp>();

/** Opens the queue of `em`'s transaction; the caller flushes it before COMMIT (and before a savepoint) and drops it on rollback. */
export function openWriteQueue(em: EntityManager): void {
  // The plain engine queues nothing: each write is sent where it is issued.
  if (!isTuned(em)) return;
  const transaction = em.getTransactionContext<object>();
  if (!transaction) throw new Error('a write queue needs an open transaction');
  if (!queues.has(transaction)) queues.set(transaction, []);
}

/** Sends the queued writes now, in one statement. */
export async function flushQueuedWrites(em: EntityManager): Promise<void> {
  const transaction = em.getTransactionContext<Transaction<unknown>>();
  if (transaction) await sendQueuedWrites(em.getConnection(), transaction);
}

/** The same for MikroORM's connection, before a statement of its own in `transaction` (src/db/engine/driver.ts). */
export async function sendQueuedWrites(connection: Connection, transaction: object): Promise<void> {
  const queued = queues.get(transaction)?.splice(0) ?? [];
  if (queued.length > 0) await sendWrites(connection, transaction as Transaction<unknown>, queued);
}

/** Forgets the queued writes: the transaction or savepoint they belong to is rolled back. */
export function dropQueuedWrites(em: EntityManager): void {
  queuedOf(em)?.splice(0);
}

/** The last write is the statement, the others its CTEs. */
async function sendWrites(connection: Connection, transaction: Transaction<unknown>, writes: QueuedWrite[]): Promise<void> {
  const last = writes[writes.length - 1]!;
  await send(
    connection,
    transaction,
    withWrites(writes.slice(0, -1), last.sql),
    writes.flatMap((w) => w.params),
  );
}

/**
 * `main` with `writes` as its first CTEs (their `?` come first, as their values do), after
 * `prefix` (WITH_COMMIT, or nothing). Built once per combination (a handful per use case) and
 * kept: the same text object each time, so the lookups by text that follow (its prepared
 * statement's name, twice) compare by identity instead of hashing a kilobyte of SQL per booking.
 */
function withWrites(writes: readonly QueuedWrite[], main: string, prefix: '' | typeof WITH_COMMIT = ''): string {
  if (writes.length === 0 && prefix === '') return main;
  let node = composed;
  for (const w of writes) {
    let next = node.after.get(w.sql);
    if (!next) node.after.set(w.sql, (next = newComposition()));
    node = next;
  }
  const texts = prefix === '' ? node.texts : node.withCommit;
  let text = texts.get(main);
  if (text === undefined) texts.set(main, (text = prefix + compose(writes, main)));
  return text;
}

/** Composed texts: per queued write's text in order (`after`), then by the main statement's text. */
interface Composition {
  after: Map<string, Composition>;
  texts: Map<string, string>;
  withCommit: Map<string, string>;
}
const newComposition = (): Composition => ({ after: new Map(), texts: new Map(), withCommit: new Map() });
const composed = newComposition();

function compose(writes: readonly QueuedWrite[], main: string): string {
  if (writes.length === 0) return main;
  const ctes = writes.map((w, i) => `queued_write_${i + 1} as (${w.sql})`).join(', ');
  const own = /^\s*with\s+/i.exec(main);
  if (own && /^recursive\b/i.test(main.slice(own[0].length))) throw new Error('withWrites: a recursive statement carries no writes');
  return own ? `with ${ctes}, ${main.slice(own[0].length)}` : `with ${ctes} ${main}`;
}

/** `?` → `$1`, `$2`, …, named by the text's hash; cached per SQL text. */
function prepare(sql: string, count: number): Prepared {
  let prepared = preparedBySql.get(sql);
  if (!prepared) {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    if (n !== count) throw new Error(`preparedRead: ${n} placeholders for ${count} values`);
    prepared = { text, name: `stmt_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
    preparedBySql.set(sql, prepared);
    namesByText.set(text, prepared.name);
  }
  return prepared;
}
