import { describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { flushQueuedWrites, preparedRead, preparedWrite, queueWrite, sqlText } from '../../src/db/engine/prepared-read.ts';
import type { Ctx } from '../../src/platform/request-context.ts';
import { inSavepoint, withTransaction } from '../../src/db/engine/transaction.ts';
import { ResellerSchema } from '../../src/modules/resellers/resellers.entity.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';

// preparedRead runs its text as a named prepared statement (src/db/engine/prepared-read.ts), inside
// a transaction on the transaction's own connection: there it sees the transaction's writes, and
// PostgreSQL holds the statement for that connection (pg_prepared_statements is per connection).
const app = useApp();

describe('preparedRead', () => {
  it("inside a transaction › a named statement on the transaction's connection, seeing its uncommitted rows", async () => {
    const reseller = await createReseller(app);
    const sql = 'select id, name from reseller where id = ? and name = ?';
    const seen = await app.orm.em
      .fork()
      .transactional(async (em) => {
        await em.execute('update reseller set name = ? where id = ?', ['Renamed in the transaction', reseller.id]);
        const rows = await preparedRead<{ id: string; name: string }>(em, sql, [reseller.id, 'Renamed in the transaction']);
        const prepared = await em.execute<{ name: string; statement: string }[]>(
          "select name, statement from pg_prepared_statements where statement like 'select id, name from reseller where id = $1%'",
        );
        throw Object.assign(new Error('roll back'), { seen: { rows, prepared } });
      })
      .catch(
        (err: { seen?: unknown }) => err.seen as { rows: { id: string; name: string }[]; prepared: { name: string; statement: string }[] },
      );
    expect(seen.rows).toEqual([{ id: reseller.id, name: 'Renamed in the transaction' }]);
    expect(seen.prepared).toEqual([
      { name: expect.stringMatching(/^stmt_[0-9a-f]{24}$/), statement: 'select id, name from reseller where id = $1 and name = $2' },
    ]);
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
        "select name from pg_prepared_statements where statement = 'update reseller set name = $1 where id = $2 returning name'",
      );
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

// Writes whose results nothing reads are queued and go together (src/db/engine/prepared-read.ts
// queueWrite): in the statement of the next prepared statement that carries them, else in one of
// their own before anything else the transaction sends, and before it ends. A rolled-back savepoint
// takes what was queued inside it, and only that.
describe('queueWrite', () => {
  const nameOf = async (id: string) => (await app.sql<{ name: string }>('select name from reseller where id = ?', [id]))[0]?.name;
  const rename = (em: EntityManager, id: string, name: string) => queueWrite(em, 'update reseller set name = ? where id = ?', [name, id]);

  it('waits for the next statement: one that carries it, a prepared one, a MikroORM one (find, flush, execute) and the end of the transaction each send it first', async () => {
    const reseller = await createReseller(app);
    app.queries!.reset();
    const statements = () => app.queries!.statements.filter((q) => !/^(begin|commit)$/.test(q));
    const seen = await withTransaction(app.orm.em.fork(), async (em) => {
      const seen: Record<string, unknown> = {};
      await rename(em, reseller.id, 'Queued 1');
      seen.queuedOnly = statements().length;
      seen.byExecute = (await em.execute<{ name: string }[]>('select name from reseller where id = ?', [reseller.id]))[0].name;
      await rename(em, reseller.id, 'Queued 2');
      seen.byPreparedRead = (await preparedRead<{ name: string }>(em, 'select name from reseller where id = ?', [reseller.id]))[0].name;
      app.queries!.reset();
      // A second change of one table's rows: one statement would apply only one of the two, so the first is sent now.
      await rename(em, reseller.id, 'Queued 3');
      await queueWrite(em, 'update reseller set lookup_enabled = true where id = ?', [reseller.id]);
      seen.sentBySecond = statements();
      app.queries!.reset();
      seen.carrier = (await preparedRead<{ echo: string }>(em, 'select ?::text as echo', ['carried'], { carriesQueued: true }))[0].echo;
      seen.carried = statements();
      seen.afterCarrier = (
        await preparedRead<{ name: string; lookup_enabled: boolean }>(em, 'select name, lookup_enabled from reseller where id = ?', [
          reseller.id,
        ])
      )[0];
      // A carrier that names the queued write's table does not carry it: sent first, it sees it.
      await rename(em, reseller.id, 'Queued 4');
      seen.byCarrierOfItsTable = (
        await preparedWrite<{ name: string }>(em, 'select name from reseller where id = ? for update', [reseller.id], {
          carriesQueued: true,
        })
      )[0].name;
      await rename(em, reseller.id, 'Queued 5');
      seen.byFind = (await em.findOneOrFail(ResellerSchema, { id: reseller.id }, { refresh: true })).name;
      await rename(em, reseller.id, 'Queued last');
      return seen;
    });
    expect(seen).toEqual({
      queuedOnly: 0,
      byExecute: 'Queued 1',
      byPreparedRead: 'Queued 2',
      sentBySecond: ['update reseller set name = $1 where id = $2'],
      carrier: 'carried',
      carried: ['with queued_write_1 as (update reseller set lookup_enabled = true where id = $1) select $2::text as echo'],
      afterCarrier: { name: 'Queued 3', lookup_enabled: true },
      byCarrierOfItsTable: 'Queued 4',
      byFind: 'Queued 5',
    });
    expect(await nameOf(reseller.id)).toBe('Queued last');
  });

  it("a read behind queued writes › both issued at the call, so a statement issued right after runs after them; the writes' failure is the one told", async () => {
    const reseller = await createReseller(app);
    const order = await withTransaction(app.orm.em.fork(), async (em) => {
      await em.execute('create temporary sequence issue_order');
      await rename(em, reseller.id, 'Queued before the read');
      // Not awaited in between: the second is issued while the first's writes and read are on their way.
      const first = preparedRead<{ n: string; name: string }>(
        em,
        "select nextval('issue_order') as n, (select name from reseller where id = ?) as name",
        [reseller.id],
      );
      const second = preparedRead<{ n: string }>(em, "select nextval('issue_order') as n", []);
      return { first: (await first)[0], second: (await second)[0] };
    });
    expect(order).toEqual({ first: { n: '1', name: 'Queued before the read' }, second: { n: '2' } });

    await expect(
      withTransaction(app.orm.em.fork(), async (em) => {
        await queueWrite(em, 'update reseller set name = null where id = ?', [reseller.id]);
        await preparedRead(em, 'select name from reseller where id = ?', [reseller.id]);
      }),
    ).rejects.toMatchObject({ code: '23502' });
    expect(await nameOf(reseller.id)).toBe('Queued before the read');
  });

  it('at most 8 in one statement › a sweep recording an event per row sends them 8 at a time', async () => {
    const reseller = await createReseller(app);
    app.queries!.reset();
    await expect(
      withTransaction(app.orm.em.fork(), async (em) => {
        for (let i = 0; i < 20; i++) {
          await queueWrite(
            em,
            "insert into outbox (topic, reseller_id, payload, created_at, available_at) values ('test.queue', ?, '{}'::jsonb, now(), now())",
            [reseller.id],
          );
        }
        await flushQueuedWrites(em);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const sent = app.queries!.statements.filter((q) => /insert into outbox/.test(q));
    expect(sent.map((q) => q.match(/insert into outbox/g)!.length)).toEqual([8, 8, 4]);
  });

  it('a savepoint rolled back › takes what was queued inside it; what was queued before it stays', async () => {
    const reseller = await createReseller(app);
    await withTransaction(app.orm.em.fork(), async (em) => {
      await rename(em, reseller.id, 'Before the savepoint');
      const ctx = { em } as unknown as Ctx;
      await expect(
        inSavepoint(ctx, async (tx) => {
          await rename(tx.em, reseller.id, 'Inside the savepoint');
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await inSavepoint(ctx, async (tx) => {
        await queueWrite(tx.em, 'update reseller set lookup_enabled = true where id = ?', [reseller.id]);
      });
    });
    expect(await app.sql('select name, lookup_enabled from reseller where id = ?', [reseller.id])).toEqual([
      { name: 'Before the savepoint', lookup_enabled: true },
    ]);
  });

  it('a queued write that fails › fails the statement that sends it, and the whole transaction rolls back', async () => {
    const reseller = await createReseller(app);
    const before = await nameOf(reseller.id);
    await expect(
      withTransaction(app.orm.em.fork(), async (em) => {
        await rename(em, reseller.id, 'Renamed first');
        await queueWrite(em, 'update reseller set name = null where id = ?', [reseller.id]);
      }),
    ).rejects.toMatchObject({ code: '23502' });
    expect(await nameOf(reseller.id)).toBe(before);
  });

  it('where no queue is open (a bare em.transactional) › sent at once; WITH or RETURNING › refused', async () => {
    const reseller = await createReseller(app);
    app.queries!.reset();
    await app.orm.em.fork().transactional(async (em) => {
      await rename(em, reseller.id, 'Sent at once');
      expect(app.queries!.statements.at(-1)).toBe('update reseller set name = $1 where id = $2');
    });
    expect(await nameOf(reseller.id)).toBe('Sent at once');
    await withTransaction(app.orm.em.fork(), async (em) => {
      await expect(queueWrite(em, 'update reseller set name = ? where id = ? returning id', ['x', reseller.id])).rejects.toThrow(
        /without WITH or RETURNING/,
      );
      await expect(queueWrite(em, 'with r as (select 1) update reseller set name = ? where id = ?', ['x', reseller.id])).rejects.toThrow(
        /without WITH or RETURNING/,
      );
    });
    expect(await nameOf(reseller.id)).toBe('Sent at once');
  });
});

// A statement text from a template is kept per place in the code and per value of its parts
// (src/db/engine/prepared-read.ts sqlText): whichever variant is asked for, the text is its own.
describe('sqlText', () => {
  const textOf = (columns: string, where: string) => sqlText`select ${columns} from reseller where ${where}`;

  it('the same text for the same parts, another for other parts, kept or not (past 16 variants), and it runs', async () => {
    expect(textOf('id, name', 'id = ?')).toBe('select id, name from reseller where id = ?');
    expect(textOf('id, name', 'id = ?')).toBe('select id, name from reseller where id = ?');
    expect(textOf('id', 'id = ?')).toBe('select id from reseller where id = ?');
    expect(textOf('id, name', 'name = ?')).toBe('select id, name from reseller where name = ?');
    // Past the 16 kept per place, texts are built each time, still right.
    for (let i = 0; i < 20; i++) expect(textOf(`id as c${i}`, 'id = ?')).toBe(`select id as c${i} from reseller where id = ?`);
    const reseller = await createReseller(app, { name: 'By its text' });
    expect(await preparedRead(app.orm.em.fork(), textOf('id, name', 'id = ?'), [reseller.id])).toEqual([
      { id: reseller.id, name: 'By its text' },
    ]);
  });
});
