import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { BeginAlongClient } from '../../src/platform/begin-along.ts';
import { useApp } from '../support/app.ts';

// BeginAlongClient (src/platform/begin-along.ts) holds `begin` back and sends it with the
// transaction's first statement that has parameters, in one exchange: one ReadyForQuery where
// there were two. These tests talk to PostgreSQL through it as Kysely does (`query(text, values)`)
// and count the exchanges by PostgreSQL's ReadyForQuery messages.
const app = useApp();

let client: BeginAlongClient | undefined;
afterEach(async () => { await client?.end(); client = undefined; });

async function connected(): Promise<{ client: BeginAlongClient; exchanges: () => number }> {
  client = new BeginAlongClient({ connectionString: app.databaseUrl });
  await client.connect();
  let count = 0;
  (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => { count++; });
  return { client, exchanges: () => count };
}

const query = <T>(c: BeginAlongClient, text: string, values: unknown[] = []) =>
  (c.query as unknown as (t: string, v: unknown[]) => Promise<{ rows: T[]; command: string }>)(text, values);

describe('BeginAlongClient', () => {
  it('begin and a statement with parameters › one exchange, the statement inside the transaction', async () => {
    const { client: c, exchanges } = await connected();
    expect((await query(c, 'begin')).command).toBe('BEGIN');
    expect(exchanges()).toBe(0);
    const [first] = (await query<{ xid: string; n: number }>(c, 'select txid_current()::text as xid, $1::int as n', [7])).rows;
    expect(first.n).toBe(7);
    expect(exchanges()).toBe(1);
    // The same transaction: outside one, every statement gets an id of its own.
    expect((await query<{ xid: string }>(c, 'select txid_current()::text as xid')).rows).toEqual([{ xid: first.xid }]);
    await query(c, 'commit');
    expect(exchanges()).toBe(3);
  });

  it('a write in the first statement, then rollback › nothing stays', async () => {
    const { client: c } = await connected();
    await query(c, 'create temporary table kept (n int)');
    await query(c, 'begin');
    expect((await query(c, 'insert into kept (n) values ($1) returning n', [1])).rows).toEqual([{ n: 1 }]);
    await query(c, 'rollback');
    expect((await query(c, 'select count(*)::int as n from kept')).rows).toEqual([{ n: 0 }]);
  });

  it('begin then commit with nothing between › nothing is sent', async () => {
    const { client: c, exchanges } = await connected();
    await query(c, 'begin');
    expect((await query(c, 'commit')).command).toBe('COMMIT');
    await query(c, 'begin');
    expect((await query(c, 'rollback')).command).toBe('ROLLBACK');
    expect(exchanges()).toBe(0);
  });

  it('a first statement without parameters (maybe several) › BEGIN goes on its own first, and the statements run inside the transaction', async () => {
    const { client: c, exchanges } = await connected();
    await query(c, 'create temporary table several (n int)');
    const before = exchanges();
    await query(c, 'begin');
    await query(c, 'insert into several values (1); insert into several values (2)');
    expect(exchanges() - before).toBe(2);
    await query(c, 'rollback');
    expect((await query(c, 'select count(*)::int as n from several')).rows).toEqual([{ n: 0 }]);
  });

  it('a first statement that fails › its error; the transaction is open and aborted until ROLLBACK, and the client goes on', async () => {
    const { client: c } = await connected();
    await query(c, 'begin');
    await expect(query(c, 'select $1::int / 0', [1])).rejects.toMatchObject({ code: '22012' });
    await expect(query(c, 'select $1::int', [1])).rejects.toMatchObject({ code: '25P02' }); // in failed transaction
    await query(c, 'rollback');
    expect((await query(c, 'select $1::int as n', [5])).rows).toEqual([{ n: 5 }]);
  });

  it('a Submittable of its own first (a cursor would be one) › sent as pg sends it, behind BEGIN, inside the transaction', async () => {
    const { client: c } = await connected();
    await query(c, 'begin');
    const own = await new Promise<{ rows: { xid: string }[] }>((resolve, reject) => {
      const submittable = new pg.Query({ text: 'select txid_current()::text as xid, $1::int as n', values: [1] },
        undefined, ((err: Error | null, result: { rows: { xid: string }[] }) => (err ? reject(err) : resolve(result))) as never);
      expect((c.query as unknown as (q: unknown) => unknown)(submittable)).toBe(submittable);
    });
    expect((await query<{ xid: string }>(c, 'select txid_current()::text as xid')).rows).toEqual([{ xid: own.rows[0].xid }]);
    await query(c, 'rollback');
  });

  it('a named prepared statement first › prepared once, then run again after BEGIN without its Parse', async () => {
    const { client: c, exchanges } = await connected();
    const named = { name: 'begin_along_test', text: 'select $1::int + 1 as n', values: [1] };
    const run = c.query.bind(c) as unknown as (config: object) => Promise<{ rows: { n: number }[] }>;
    for (const n of [1, 2]) {
      const before = exchanges();
      await query(c, 'begin');
      expect((await run({ ...named, values: [n] })).rows).toEqual([{ n: n + 1 }]);
      await query(c, 'commit');
      expect(exchanges() - before).toBe(2);
    }
    expect((await query(c, "select count(*)::int as n from pg_prepared_statements where name = 'begin_along_test'")).rows).toEqual([{ n: 1 }]);
  });
});
