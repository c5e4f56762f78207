import { describe, expect, it } from 'vitest';
import { preparedRead, preparedWrite } from '../../src/platform/prepared-read.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';

// preparedRead runs its text as a named prepared statement (src/platform/prepared-read.ts), inside
// a transaction on the transaction's own connection: there it sees the transaction's writes, and
// PostgreSQL holds the statement for that connection (pg_prepared_statements is per connection).
const app = useApp();

describe('preparedRead', () => {
  it("inside a transaction › a named statement on the transaction's connection, seeing its uncommitted rows", async () => {
    const reseller = await createReseller(app);
    const sql = 'select id, name from reseller where id = ? and name = ?';
    const seen = await app.orm.em.fork().transactional(async (em) => {
      await em.execute('update reseller set name = ? where id = ?', ['Renamed in the transaction', reseller.id]);
      const rows = await preparedRead<{ id: string; name: string }>(em, sql, [reseller.id, 'Renamed in the transaction']);
      const prepared = await em.execute<{ name: string; statement: string }[]>(
        "select name, statement from pg_prepared_statements where statement like 'select id, name from reseller where id = $1%'");
      throw Object.assign(new Error('roll back'), { seen: { rows, prepared } });
    }).catch((err: { seen?: unknown }) => err.seen as { rows: { id: string; name: string }[]; prepared: { name: string; statement: string }[] });
    expect(seen.rows).toEqual([{ id: reseller.id, name: 'Renamed in the transaction' }]);
    expect(seen.prepared).toEqual([{ name: expect.stringMatching(/^stmt_[0-9a-f]{24}$/), statement: 'select id, name from reseller where id = $1 and name = $2' }]);
    // Rolled back: outside, on the pool, the same statement finds the name as committed.
    expect(await preparedRead(app.orm.em.fork(), sql, [reseller.id, 'Renamed in the transaction'])).toEqual([]);
  });
});

describe('preparedWrite', () => {
  it('inside a transaction › a named statement whose RETURNING rows come back; outside one › refused before anything is sent', async () => {
    const reseller = await createReseller(app);
    const sql = 'update reseller set name = ? where id = ? returning name';
    const seen = await app.orm.em.fork().transactional(async (em) => {
      const rows = await preparedWrite<{ name: string }>(em, sql, ['Renamed by a prepared write', reseller.id]);
      const prepared = await em.execute<{ name: string }[]>(
        "select name from pg_prepared_statements where statement = 'update reseller set name = $1 where id = $2 returning name'");
      return { rows, prepared };
    });
    expect(seen.rows).toEqual([{ name: 'Renamed by a prepared write' }]);
    expect(seen.prepared).toEqual([{ name: expect.stringMatching(/^stmt_[0-9a-f]{24}$/) }]);
    expect(await app.sql('select name from reseller where id = ?', [reseller.id])).toEqual([{ name: 'Renamed by a prepared write' }]);

    // Outside a transaction a balance, a counter or a ledger could move apart from its use case's effects.
    await expect(preparedWrite(app.orm.em.fork(), sql, ['Outside', reseller.id])).rejects.toThrow(/only inside a transaction/);
    expect(await app.sql('select name from reseller where id = ?', [reseller.id])).toEqual([{ name: 'Renamed by a prepared write' }]);
  });
});
