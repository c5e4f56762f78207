import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EdgesAlongClient, WITH_COMMIT } from '../../src/db/engine/edges-along.ts';
import { useApp } from '../support/app.ts';
import { countRoundTrips } from '../support/round-trips.ts';

// EdgesAlongClient (src/db/engine/edges-along.ts) holds `begin` back and sends it with the
// transaction's first statement that has parameters, in one exchange: one ReadyForQuery where
// there were two; and it holds a statement marked WITH_COMMIT and sends it with `commit`, in one
// exchange too. These tests talk to PostgreSQL through it as Kysely does (`query(text, values)`)
// and count the exchanges by PostgreSQL's ReadyForQuery messages, and the round trips by what it
// sends while nothing it sent waits for an answer.
const app = useApp();

let client: EdgesAlongClient | undefined;
afterEach(async () => {
  await client?.end();
  client = undefined;
});

async function connected(): Promise<{ client: EdgesAlongClient; exchanges: () => number; roundTrips: () => number }> {
  client = new EdgesAlongClient({ connectionString: app.databaseUrl });
  await client.connect();
  return { client, ...countRoundTrips(client) };
}

const query = <T>(c: EdgesAlongClient, text: string, values: unknown[] = []) =>
  (c.query as unknown as (t: string, v: unknown[]) => Promise<{ rows: T[]; command: string }>)(text, values);

describe('EdgesAlongClient', () => {
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
      const submittable = new pg.Query({ text: 'select txid_current()::text as xid, $1::int as n', values: [1] }, undefined, ((
        err: Error | null,
        result: { rows: { xid: string }[] },
      ) => (err ? reject(err) : resolve(result))) as never);
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
    expect((await query(c, "select count(*)::int as n from pg_prepared_statements where name = 'begin_along_test'")).rows).toEqual([
      { n: 1 },
    ]);
  });
});

describe('EdgesAlongClient, a statement sent with COMMIT', () => {
  /** A table of its own per test, and a second connection that sees only what was committed. */
  async function table(c: EdgesAlongClient, name: string): Promise<{ committed: () => Promise<number[]> }> {
    await query(c, `create table ${name} (n int check (n > 0))`);
    const other = new pg.Client({ connectionString: app.databaseUrl });
    await other.connect();
    cleanups.push(async () => {
      await other.end();
      await query(c, `drop table if exists ${name}`);
    });
    return { committed: async () => (await other.query<{ n: number }>(`select n from ${name} order by n`)).rows.map((r) => r.n) };
  }
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('after a statement › answered at once with no rows, then sent with COMMIT in one exchange; both committed', async () => {
    const { client: c, exchanges } = await connected();
    const t = await table(c, 'along_after');
    const before = exchanges();
    await query(c, 'begin');
    await query(c, 'insert into along_after (n) values ($1)', [1]);
    const held = await query(c, `${WITH_COMMIT}insert into along_after (n) values ($1) returning n`, [2]);
    expect(held.rows).toEqual([]);
    expect(exchanges() - before).toBe(1);
    expect(await t.committed()).toEqual([]);
    expect((await query(c, 'commit')).command).toBe('COMMIT');
    expect(exchanges() - before).toBe(2);
    expect(await t.committed()).toEqual([1, 2]);
  });

  it('the only statement › BEGIN, it and COMMIT in one exchange', async () => {
    const { client: c, exchanges } = await connected();
    const t = await table(c, 'along_only');
    const before = exchanges();
    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_only (n) values ($1)`, [3]);
    await query(c, 'commit');
    expect(exchanges() - before).toBe(1);
    expect(await t.committed()).toEqual([3]);
    // The transaction is over: a statement after it runs on its own.
    expect((await query<{ n: number }>(c, 'select $1::int as n', [4])).rows).toEqual([{ n: 4 }]);
  });

  it('that fails › COMMIT fails with its error and commits nothing; ROLLBACK then ends the aborted transaction, and the client goes on', async () => {
    const { client: c } = await connected();
    const t = await table(c, 'along_fails');
    await query(c, 'begin');
    await query(c, 'insert into along_fails (n) values ($1)', [1]);
    await query(c, `${WITH_COMMIT}insert into along_fails (n) values ($1)`, [-1]);
    await expect(query(c, 'commit')).rejects.toMatchObject({ code: '23514', constraint: 'along_fails_n_check' });
    expect((await query(c, 'rollback')).command).toBe('ROLLBACK');
    expect(await t.committed()).toEqual([]);
    expect((await query<{ n: number }>(c, 'select $1::int as n', [5])).rows).toEqual([{ n: 5 }]);
  });

  it('that fails as the only statement › the same, BEGIN having gone with it', async () => {
    const { client: c } = await connected();
    const t = await table(c, 'along_fails_alone');
    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_fails_alone (n) values ($1)`, [0]);
    await expect(query(c, 'commit')).rejects.toMatchObject({ code: '23514' });
    await query(c, 'rollback');
    expect(await t.committed()).toEqual([]);
    expect((await query<{ n: number }>(c, 'select $1::int as n', [6])).rows).toEqual([{ n: 6 }]);
  });

  it('then ROLLBACK › never sent', async () => {
    const { client: c, exchanges } = await connected();
    const t = await table(c, 'along_rolled_back');
    const before = exchanges();
    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_rolled_back (n) values ($1)`, [7]);
    expect((await query(c, 'rollback')).command).toBe('ROLLBACK');
    expect(exchanges() - before).toBe(0);
    await query(c, 'begin');
    await query(c, 'insert into along_rolled_back (n) values ($1)', [8]);
    await query(c, `${WITH_COMMIT}insert into along_rolled_back (n) values ($1)`, [9]);
    await query(c, 'rollback');
    expect(await t.committed()).toEqual([]);
  });

  it("then another statement › sent first, on its own, so the statement sees it; its failure is the statement's", async () => {
    const { client: c } = await connected();
    const t = await table(c, 'along_then');
    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_then (n) values ($1)`, [10]);
    expect((await query<{ n: number }>(c, 'select count(*)::int as n from along_then where n > $1', [0])).rows).toEqual([{ n: 1 }]);
    await query(c, 'commit');
    expect(await t.committed()).toEqual([10]);

    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_then (n) values ($1)`, [-10]);
    await expect(query(c, 'select $1::int as n', [1])).rejects.toMatchObject({ code: '23514' });
    await query(c, 'rollback');
    expect(await t.committed()).toEqual([10]);
  });

  it("a refusal at COMMIT (a deferred constraint) › COMMIT's error", async () => {
    const { client: c } = await connected();
    const t = await table(c, 'along_deferred');
    await query(c, 'create table along_deferred_ref (id int primary key)');
    await query(c, 'alter table along_deferred add column ref int references along_deferred_ref (id) deferrable initially deferred');
    cleanups.push(async () => {
      await query(c, 'drop table if exists along_deferred, along_deferred_ref');
    });
    await query(c, 'begin');
    await query(c, `${WITH_COMMIT}insert into along_deferred (n, ref) values ($1, $2)`, [1, 404]);
    await expect(query(c, 'commit')).rejects.toMatchObject({ code: '23503' });
    expect(await t.committed()).toEqual([]);
  });

  it('outside a transaction › sent at once (no COMMIT would come)', async () => {
    const { client: c, exchanges } = await connected();
    const t = await table(c, 'along_outside');
    const before = exchanges();
    await query(c, `${WITH_COMMIT}insert into along_outside (n) values ($1)`, [11]);
    expect(exchanges() - before).toBe(1);
    expect(await t.committed()).toEqual([11]);
  });
});

describe('EdgesAlongClient, statements given together', () => {
  it('three statements given at once in a transaction › one round trip, run in the order given (the second sees the first)', async () => {
    const { client: c, exchanges, roundTrips } = await connected();
    await query(c, 'create temporary table pipelined (n int)');
    const [tripsBefore, exchangesBefore] = [roundTrips(), exchanges()];
    await query(c, 'begin');
    const [inserted, counted, doubled] = await Promise.all([
      query<{ n: number }>(c, 'insert into pipelined (n) values ($1) returning n', [1]),
      query<{ n: number }>(c, 'select count(*)::int as n from pipelined where n = $1', [1]),
      query<{ n: number }>(c, 'select $1::int * 2 as n', [21]),
    ]);
    expect([inserted.rows, counted.rows, doubled.rows]).toEqual([[{ n: 1 }], [{ n: 1 }], [{ n: 42 }]]);
    expect(roundTrips() - tripsBefore).toBe(1);
    expect(exchanges() - exchangesBefore).toBe(3);
    await query(c, 'commit');
    expect(roundTrips() - tripsBefore).toBe(2);
  });

  it('three statements given at once › one write to the socket (one system call), not one per statement', async () => {
    const { client: c } = await connected();
    const socket = (c as unknown as { connection: { stream: { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void } } })
      .connection.stream;
    let writes = 0;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method]!.bind(socket);
      socket[method] = (...a: unknown[]) => {
        writes++;
        original(...a);
      };
    }
    await query(c, 'begin');
    await Promise.all([1, 2, 3].map((n) => query(c, 'select $1::int as n', [n])));
    expect(writes).toBe(1);
    await query(c, 'rollback');
  });

  it('the first of them fails › its error; those behind it fail as in an aborted transaction (25P02); ROLLBACK, and the client goes on', async () => {
    const { client: c } = await connected();
    await query(c, 'begin');
    const results = await Promise.allSettled([query(c, 'select $1::int / 0', [1]), query(c, 'select $1::int', [2])]);
    expect(results.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code)).toEqual(['22012', '25P02']);
    await query(c, 'rollback');
    expect((await query(c, 'select $1::int as n', [5])).rows).toEqual([{ n: 5 }]);
  });

  it("given with one sent only after BEGIN's answer (no parameters) › the later one waits behind it: PostgreSQL sees them in the order given", async () => {
    const { client: c } = await connected();
    await query(c, 'create temporary table behind_begin (n int)');
    await query(c, 'begin');
    const [, after] = await Promise.all([
      query(c, 'insert into behind_begin values (1); insert into behind_begin values (2)'),
      query<{ n: number }>(c, 'select count(*)::int as n from behind_begin where n > $1', [0]),
    ]);
    expect(after.rows).toEqual([{ n: 2 }]);
    await query(c, 'rollback');
  });

  it('a Submittable of its own (not a pg Query: a cursor would be one) › refused, since it cannot share a pipelined connection', async () => {
    const { client: c } = await connected();
    const cursorLike = { submit: () => undefined, handleError: () => undefined };
    expect(() => (c.query as unknown as (q: unknown) => unknown)(cursorLike)).toThrow(/a client of its own/);
    expect((await query(c, 'select $1::int as n', [3])).rows).toEqual([{ n: 3 }]);
  });
});
