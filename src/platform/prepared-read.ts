import { createHash } from 'node:crypto';
import pg from 'pg';
import { CompiledQuery, type Transaction } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';

// The hottest statements (the pass lists, a booking's reads and its raw writes: README "Request
// pipeline", bench/README.md) as named prepared statements. MikroORM sends every statement as text
// with its values inlined, so PostgreSQL parses and plans each one anew (60-80 µs of its CPU for a
// booking's reads here); a prepared statement is parsed once per connection and its plan reused
// (12-16 µs), and its values (an event's JSON payload, say) travel as parameters, not as SQL text.

interface Prepared { name: string; text: string }
const preparedBySql = new Map<string, Prepared>();
/** Statement texts ($1 placeholders) that run as named statements, by text. */
const namesByText = new Map<string, string>();

/**
 * The `pg` client of the ORM's pool (ormOptions, src/db/orm.ts): a text preparedRead registered
 * runs as its named statement on whichever path it comes, the pool's or a transaction's (Kysely
 * hands its statements to `client.query(text, values)`); anything else runs as before.
 */
export class PreparingClient extends pg.Client {
  // One signature for pg's many overloads: typed `never` so it stands for each of them; it returns
  // whatever pg's own query returns for these arguments (a promise, or nothing with a callback).
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name = typeof text === 'string' && Array.isArray(values) ? namesByText.get(text) : undefined;
    const call = super.query.bind(this) as (...a: unknown[]) => never;
    return name === undefined ? call(...args) : call({ name, text, values }, callback);
  }
}

/**
 * Runs a read (`?` placeholders, as for em.execute) as a named prepared statement, logged through
 * the ORM's logger like any statement: on the ORM's pool, or inside a transaction on its
 * connection. The SQL must be one of a few fixed texts (values only as parameters): each distinct
 * text is prepared on every connection once. Values bind as `pg` binds them (no array expansion).
 */
export async function preparedRead<T extends object>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  const { text } = prepare(sql, params.length);
  const connection = em.getConnection();
  const started = performance.now();
  const transaction = em.getTransactionContext<Transaction<unknown>>();
  const rows = transaction
    ? (await transaction.executeQuery<T>(CompiledQuery.raw(text, [...params]))).rows
    : (await (await connection.getNativeClient()).query<T>(text, [...params])).rows;
  // Through the logger MikroORM's own statements take (debug logging, the tests' statement count).
  (connection as unknown as { logQuery(query: string, context: object): void }).logQuery(text, { took: Math.round(performance.now() - started), results: rows.length });
  return rows;
}

/**
 * A raw write (an UPDATE, an INSERT or a locking SELECT, with its RETURNING rows; `?` placeholders)
 * as a named prepared statement in the caller's transaction: preparedRead's rules, and only inside a
 * transaction (balances, counters, ledgers and the outbox change with the use case's effects, or
 * not at all). A value's type comes from where it lands (a column, a comparison); where nothing
 * says it, the SQL casts it (`?::int`).
 */
export async function preparedWrite<T extends object>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  if (!em.isInTransaction()) throw new Error('balances, counters, ledgers and the outbox change only inside a transaction');
  return preparedRead<T>(em, sql, params);
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
