import { expect } from 'vitest';
import type { TestApp } from '../support/app.ts';
import type { Reply } from '../support/http.ts';

// What the passes tests read back from the database: row counts, the mutable columns of the rows
// a failed request could have touched, balances and the outbox.

export interface DbState {
  counts: { client: number; issued_pass: number; business_transaction: number; credit_transaction: number; outbox: number };
  issuedPasses: unknown[];
  resellerBalances: unknown[];
  wallets: unknown[];
}

export async function dbState(app: TestApp): Promise<DbState> {
  const [counts] = await app.sql<Record<string, string>>(
    `select (select count(*) from client) as client, (select count(*) from issued_pass) as issued_pass,
            (select count(*) from business_transaction) as business_transaction,
            (select count(*) from credit_transaction) as credit_transaction, (select count(*) from outbox) as outbox`);
  return {
    counts: {
      client: Number(counts.client),
      issued_pass: Number(counts.issued_pass),
      business_transaction: Number(counts.business_transaction),
      credit_transaction: Number(counts.credit_transaction),
      outbox: Number(counts.outbox),
    },
    issuedPasses: await app.sql(
      `select id, pass_id, status, payment_model, start_date::text as start_date, expires_at, visits_period, visits_used, updated_at
         from issued_pass order by id`),
    resellerBalances: await app.sql('select id, balance::text as balance from reseller order by id'),
    wallets: await app.sql('select id, credit_balance::text as credit_balance from client order by id'),
  };
}

/** Fails unless the database is exactly as it was (nothing inserted, nothing updated). */
export async function expectUnchanged(app: TestApp, before: DbState): Promise<void> {
  expect(await dbState(app)).toEqual(before);
}

/** A V3 error reply: status, envelope and the request id matching the header. */
export function expectError(res: Reply, status: number, code: string, param?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error).toMatchObject({ code, request_id: res.headers.get('request-id') });
  expect(typeof res.body.error.message).toBe('string');
  expect(typeof res.body.error.type).toBe('string');
  if (param === undefined) expect(res.body.error).not.toHaveProperty('param');
  else expect(res.body.error.param).toBe(param);
}

export const expectValidationError = (res: Reply, param: string) => {
  expectError(res, 400, 'validation_error', param);
  expect(res.body.error.type).toBe('invalid_request_error');
};

export interface EventRow { id: string; topic: string; reseller_id: string | null; payload: { type: string; object: string; data: { object: Record<string, any> } } }

/** Outbox rows written after `afterId` (bigserial), oldest first. */
export async function outboxSince(app: TestApp, afterId: number): Promise<EventRow[]> {
  const rows = await app.sql<EventRow>('select id::text as id, topic, reseller_id, payload from outbox where id > ? order by id', [afterId]);
  return rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

export async function lastOutboxId(app: TestApp): Promise<number> {
  const [row] = await app.sql<{ id: string | null }>('select max(id)::text as id from outbox');
  return Number(row.id ?? 0);
}

export const unix = (iso: string): number => Math.floor(new Date(iso).getTime() / 1000);
