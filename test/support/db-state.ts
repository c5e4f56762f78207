import type { TestApp } from './app.ts';

// What a failed request must leave as it was, read back from the database. Tables are registered
// once; dbState(app) snapshots every registered table, so a new module adds its tables here (or at
// the top of its own test file, for tables only its tests touch) without editing existing tests.

/** A registered table: with `rows`, its listed rows (ordered) are compared; without, its row count. */
interface TrackedTable {
  rows?: string;
}

const tracked = new Map<string, TrackedTable>();

/**
 * Tracks `table` in every dbState from now on (in this test file's process). `rows` is a select of
 * the mutable columns a request could change, with a stable `order by`; leave it out to track only
 * how many rows the table has (inserts and deletes, not updates).
 */
export function registerDbTable(table: string, rows?: string): void {
  tracked.set(table, { rows });
}

// Everything a failed pass, client or ledger request could write.
registerDbTable('client', 'select id, credit_balance::text as credit_balance from client order by id');
registerDbTable(
  'issued_pass',
  `select id, pass_id, status, payment_model, start_date::text as start_date, expires_at, visits_period, visits_used, updated_at
     from issued_pass order by id`,
);
registerDbTable('business_transaction');
registerDbTable('credit_transaction');
registerDbTable('outbox');
registerDbTable('reseller', 'select id from reseller order by id');
registerDbTable('business_account', 'select reseller_id, balance::text as balance from business_account order by reseller_id');

/** Per registered table: its rows (when registered with a select) or its row count. */
export type DbState = Record<string, unknown[] | number>;

export async function dbState(app: TestApp): Promise<DbState> {
  const state: DbState = {};
  for (const [table, { rows }] of tracked) {
    if (rows !== undefined) state[table] = await app.sql(rows);
    else state[table] = Number((await app.sql<{ n: string }>(`select count(*) as n from ${table}`))[0].n);
  }
  return state;
}

export interface EventRow {
  id: string;
  topic: string;
  reseller_id: string | null;
  payload: { type: string; object: string; data: { object: Record<string, any> } };
}

/** Outbox rows written after `afterId` (bigserial), oldest first. */
export async function outboxSince(app: TestApp, afterId: number): Promise<EventRow[]> {
  const rows = await app.sql<EventRow>('select id::text as id, topic, reseller_id, payload from outbox where id > ? order by outbox.id', [
    afterId,
  ]);
  return rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

export async function lastOutboxId(app: TestApp): Promise<number> {
  const [row] = await app.sql<{ id: string | null }>('select max(id)::text as id from outbox');
  return Number(row.id ?? 0);
}
