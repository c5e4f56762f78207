import { describe, expect, it } from 'vitest';
import { lastWriteWithCommit, preparedWrite } from '../../src/db/engine/prepared-read.ts';
import type { Ctx } from '../../src/platform/request-context.ts';
import { newRequestId } from '../../src/platform/request-context.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { inTransaction } from '../../src/db/engine/transaction.ts';
import { ResellerSchema } from '../../src/modules/resellers/resellers.entity.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';

// A top-level transaction (src/db/engine/transaction.ts inTransaction, as every request's use case
// runs) is Kysely's own transaction given to a fork of the entity manager: the unit of work is
// flushed before COMMIT when it holds anything, and not at all when the use case wrote only by SQL;
// a thrown error rolls back both. BEGIN, COMMIT and ROLLBACK reach the ORM's logger as sent.
const app = useApp();

const ctxOf = (): Ctx => ({
  em: app.orm.em.fork(),
  caller: { kind: 'anonymous' },
  clock: app.clock,
  config: app.config,
  log: createLogger({ LOG_LEVEL: 'silent' }),
  requestId: newRequestId(),
});
const nameOf = async (id: string) => (await app.sql<{ name: string }>('select name from reseller where id = ?', [id]))[0]?.name;

describe('inTransaction, top level', () => {
  it('a managed entity changed by the use case is flushed before COMMIT, in its transaction', async () => {
    const reseller = await createReseller(app);
    app.queries!.reset();
    await inTransaction(ctxOf(), async (tx) => {
      const row = await tx.em.findOneOrFail(ResellerSchema, { id: reseller.id });
      row.name = 'Renamed through the unit of work';
    });
    expect(await nameOf(reseller.id)).toBe('Renamed through the unit of work');
    const statements = app.queries!.ownStatements.filter((q) => !/select name from reseller/.test(q));
    expect(statements[0]).toBe('begin');
    expect(statements.some((q) => /^update "reseller"/.test(q))).toBe(true);
    expect(statements[statements.length - 1]).toBe('commit');
  });

  it('a use case that writes only by SQL sends no flush: BEGIN, its statement, COMMIT', async () => {
    const reseller = await createReseller(app);
    app.queries!.reset();
    await inTransaction(ctxOf(), (tx) =>
      preparedWrite(tx.em, 'update reseller set name = ? where id = ? returning id', ['Renamed by SQL', reseller.id]),
    );
    expect(app.queries!.ownStatements).toEqual(['begin', 'update reseller set name = $1 where id = $2 returning id', 'commit']);
    expect(await nameOf(reseller.id)).toBe('Renamed by SQL');
  });

  it('an error rolls back its SQL and its unit of work alike, and reaches the caller', async () => {
    const reseller = await createReseller(app, { name: 'As committed' });
    app.queries!.reset();
    const failure = new Error('the use case failed');
    await expect(
      inTransaction(ctxOf(), async (tx) => {
        await preparedWrite(tx.em, 'update reseller set name = ? where id = ? returning id', ['Renamed by SQL', reseller.id]);
        const row = await tx.em.findOneOrFail(ResellerSchema, { id: reseller.id });
        row.status = 'DISABLED';
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await app.sql('select name, status from reseller where id = ?', [reseller.id])).toEqual([
      { name: 'As committed', status: 'ACTIVE' },
    ]);
    // The unit of work's change was never sent, and the transaction ended in ROLLBACK.
    const sent = app.queries!.ownStatements.filter((q) => q !== 'select name, status from reseller where id = ?');
    expect(sent.filter((q) => /^update "reseller"/.test(q))).toEqual([]);
    expect(sent.at(-1)).toBe('rollback');
  });

  it('a failure at COMMIT (a statement sent with it) rolls back, and the connection serves the next transaction', async () => {
    const reseller = await createReseller(app, { name: 'As committed' });
    // A NOT NULL violation in the statement that rides with COMMIT (the idempotency record's path): COMMIT's failure.
    await expect(
      inTransaction(ctxOf(), async (tx) => {
        await preparedWrite(tx.em, 'update reseller set name = ? where id = ? returning id', ['Renamed by SQL', reseller.id]);
        await lastWriteWithCommit(tx.em, 'update reseller set name = ? where id = ?', [null, reseller.id]);
      }),
    ).rejects.toMatchObject({ code: '23502' });
    expect(await nameOf(reseller.id)).toBe('As committed');
    // Every pooled connection still works (none was left inside a failed transaction).
    for (let i = 0; i < app.config.DB_POOL_MAX + 2; i++) {
      await inTransaction(ctxOf(), (tx) =>
        preparedWrite(tx.em, 'update reseller set name = ? where id = ? returning id', [`Renamed ${i}`, reseller.id]),
      );
    }
    expect(await nameOf(reseller.id)).toBe(`Renamed ${app.config.DB_POOL_MAX + 1}`);
  });
});
