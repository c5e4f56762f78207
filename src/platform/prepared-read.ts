import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

// The hottest reads (the pass lists: README "Request pipeline", bench/README.md) as named prepared
// statements. MikroORM sends every statement as text with its values inlined, so PostgreSQL parses
// and plans each one anew; a prepared statement is parsed once per connection and its plan reused,
// which measured about a fifth more GraphQL `passes(first: 10)` per second on these 2 cores.

interface Prepared { name: string; text: string }
const preparedBySql = new Map<string, Prepared>();

/**
 * Runs a read (`?` placeholders, as for em.execute) as a named prepared statement on the ORM's own
 * `pg` pool, with its type parsers, logged through the ORM's logger like any statement. Inside a
 * transaction it goes through em.execute instead, on the transaction's connection. The SQL must be
 * one of a few fixed texts (values only as parameters): each distinct text is prepared on every
 * connection once. Values bind as `pg` binds them (no array expansion).
 */
export async function preparedRead<T extends object>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  if (em.isInTransaction()) return em.execute<T[]>(sql, [...params]);
  const { name, text } = prepare(sql, params.length);
  const connection = em.getConnection();
  const pool = await connection.getNativeClient();
  const started = performance.now();
  const { rows } = await pool.query<T>({ name, text, values: [...params] });
  // Through the logger MikroORM's own statements take (debug logging, the tests' statement count).
  (connection as unknown as { logQuery(query: string, context: object): void }).logQuery(text, { took: Math.round(performance.now() - started), results: rows.length });
  return rows;
}

/** `?` → `$1`, `$2`, …, named by the text's hash; cached per SQL text. */
function prepare(sql: string, count: number): Prepared {
  let prepared = preparedBySql.get(sql);
  if (!prepared) {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    if (n !== count) throw new Error(`preparedRead: ${n} placeholders for ${count} values`);
    prepared = { text, name: `read_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
    preparedBySql.set(sql, prepared);
  }
  return prepared;
}
