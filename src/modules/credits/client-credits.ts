import { notFound } from '../../platform/errors.ts';
import { preparedRead } from '../../db/engine/index.ts';
import { isId } from '../../platform/ids.ts';
import { invalidCursor, type Page, type PageArgs } from '../../platform/pagination.ts';
import { mapPages, pagesPerParent } from '../../platform/pages-per-parent.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { checkLookedUpClient, readableClientSql } from '../clients/index.ts';
import type { CreditTransaction } from './credits.entity.ts';
import type { CreditBalanceView } from './credits.presenter.ts';

// A client's wallet read back (docs/partner-guide.md "Credits"): its balance and its rows newest first. "Newest"
// is the order the balance moved in, `seq` (drawn under the client row's lock), not the id, which
// was made before the lock wait; cursors are still row ids.

/** Rows GET /clients/{id}/credits shows when no `limit` is sent. */
export const RECENT_TRANSACTIONS = 20;

interface WalletRow {
  id: string;
  reseller_id: string;
  client_id: string;
  type: 'CREDIT' | 'DEBIT';
  amount: string | number;
  balance_after: string | number;
  description: string;
  booking_id: string | null;
  credit_purchase_id: string | null;
  created_at: Date | string;
}

/** A credit_transaction row as the entity's shape (a read only: no hydration). */
function walletRow(row: WalletRow): CreditTransaction {
  return {
    id: row.id,
    resellerId: row.reseller_id,
    clientId: row.client_id,
    type: row.type,
    amount: Number(row.amount),
    balanceAfter: Number(row.balance_after),
    description: row.description,
    bookingId: row.booking_id ?? null,
    creditPurchaseId: row.credit_purchase_id ?? null,
    createdAt: new Date(row.created_at),
  } as CreditTransaction;
}

/**
 * GET /clients/{client_id}/credits, in one statement so the balance and the rows are one snapshot
 * (with no cursor, the first row's balance_after is the balance): a client the caller may read (its
 * reseller's, or a looked-up one: docs/partner-guide.md "Lookup"; else 404), then a page of its wallet, newest first. A cursor that is not a row of this
 * wallet is 400 invalid_cursor.
 */
export async function clientCredits(ctx: Ctx, clientId: string, page: PageArgs): Promise<CreditBalanceView> {
  const { currency } = resellerOf(ctx);
  // The caller's own client, or a looked-up one (docs/partner-guide.md "Lookup"): clients.service.ts says which it may read.
  checkLookedUpClient(ctx, clientId);
  const readable = readableClientSql(ctx, 'client');
  if (!isId('client', clientId)) throw notFound('client', clientId);
  const cursor = page.startingAfter ?? page.endingBefore;
  const backward = page.endingBefore !== undefined || page.backward === true;
  const order = backward ? 'asc' : 'desc';
  const bound = cursor === undefined ? 'true' : `t.seq ${backward ? '>' : '<'} (select seq from cur)`;
  const rows = await preparedRead<Partial<WalletRow> & { credit_balance: string; cursor_ok: boolean; seq: string | null }>(
    ctx.em,
    `with c as (select id, credit_balance from client where id = ? and ${readable.sql}),
          cur as (select seq from credit_transaction where id = ? and client_id = ?)
     select c.credit_balance, exists (select 1 from cur) as cursor_ok, t.*
       from c left join lateral (
         select t.id, t.reseller_id, t.client_id, t.type, t.amount, t.balance_after, t.description, t.booking_id,
                t.credit_purchase_id, t.created_at, t.seq
           from credit_transaction t
          where t.client_id = c.id and ${bound}
          order by t.seq ${order} limit ?
       ) t on true
      order by t.seq ${order}`,
    [clientId, ...readable.params, cursor ?? null, clientId, page.limit + 1],
  );
  if (rows.length === 0) throw notFound('client', clientId);
  if (cursor !== undefined && !rows[0].cursor_ok) throw invalidCursor(page, cursor);
  const found = rows.filter((r) => r.id != null).map((r) => walletRow(r as WalletRow));
  const transactions = found.slice(0, page.limit);
  if (backward) transactions.reverse();
  return { clientId, balance: Number(rows[0].credit_balance), currency, transactions, hasMore: found.length > page.limit };
}

/**
 * A page of wallet rows for each client of a page of clients (GraphQL Client.credits.transactions),
 * by the rules of clientCredits, in one statement for all of them (src/platform/pages-per-parent.ts).
 * The clients are the caller's to read already (Client nodes load through clients.service.ts: its
 * own, or looked-up ones, docs/partner-guide.md "Lookup"), so a wallet is read whoever wrote its rows; a cursor is a
 * row of one client's wallet, so every other client's connection answers invalid_cursor.
 */
export async function creditTransactionPagesOfClients(
  ctx: Ctx,
  clientIds: readonly string[],
  page: PageArgs,
): Promise<Map<string, Page<CreditTransaction> | Error>> {
  resellerOf(ctx);
  const pages = await pagesPerParent(
    ctx.em,
    {
      table: 'credit_transaction t',
      alias: 't',
      parentColumn: 'client_id',
      sortColumn: 'seq',
      descending: true,
      where: [],
      params: [],
    },
    [...new Set(clientIds)],
    page,
  );
  return mapPages(pages, (row) => walletRow(row as unknown as WalletRow));
}
