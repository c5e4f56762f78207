import net from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { DomainError } from '../../src/platform/errors.ts';
import { isDatabaseUnreachable, unavailableOf } from '../../src/platform/unavailable.ts';

// What counts as "the database unreachable" (src/platform/unavailable.ts): the failures pg really
// gives for a refused connection, a terminated backend, a broken client and a pool timeout, and
// none of the failures a reachable database answers with.

let admin: pg.Client;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err,
  );

describe('isDatabaseUnreachable', () => {
  it('a connection refused', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const err = await failure(new pg.Client({ host: '127.0.0.1', port, user: 'postgres' }).connect());
    expect(isDatabaseUnreachable(err)).toBe(true);
    expect(unavailableOf(err)).toMatchObject({
      code: 'service_unavailable',
      status: 503,
      headers: { 'Retry-After': expect.stringMatching(/^\d+$/) },
    });
  });

  it('a backend terminated by an administrator (57P01), then the client that is no longer queryable', async () => {
    const client = new pg.Client({ connectionString: inject('adminUrl') });
    await client.connect();
    client.on('error', () => undefined);
    const { pid } = (await client.query('select pg_backend_pid() as pid')).rows[0];
    const running = failure(client.query('select pg_sleep(30)'));
    await admin.query('select pg_terminate_backend($1)', [pid]);
    const terminated = await running;
    expect(terminated).toMatchObject({
      message: expect.stringMatching(/terminating connection due to administrator command|Connection terminated unexpectedly/),
    });
    expect(isDatabaseUnreachable(terminated)).toBe(true);
    const after = await failure(client.query('select 1'));
    expect(isDatabaseUnreachable(after)).toBe(true);
  });

  it('no connection from the pool in time', async () => {
    const pool = new pg.Pool({ connectionString: inject('adminUrl'), max: 1, connectionTimeoutMillis: 100 });
    const held = await pool.connect();
    const err = await failure(pool.connect());
    expect(isDatabaseUnreachable(err)).toBe(true);
    held.release();
    await pool.end();
  });

  it('connection exceptions and shutdowns by SQLSTATE, also as the cause of a wrapping error', () => {
    for (const code of ['08000', '08003', '08006', '08001', '57P01', '57P02', '57P03']) {
      expect(isDatabaseUnreachable(Object.assign(new Error('x'), { code })), code).toBe(true);
      expect(isDatabaseUnreachable(new Error('wrapped', { cause: Object.assign(new Error('x'), { code }) })), code).toBe(true);
    }
    expect(isDatabaseUnreachable(Object.assign(new AggregateError([Object.assign(new Error(''), { code: 'ECONNREFUSED' })]), {}))).toBe(
      true,
    );
  });

  it('not what a reachable database answers, nor a catalogue error', async () => {
    const syntax = await failure(admin.query('selec 1'));
    const divisionByZero = await failure(admin.query('select 1 from (values (1)) v(x) where x = 1/0'));
    const cancelled = await failure(admin.query('set statement_timeout = 1; select pg_sleep(1)'));
    await admin.query('reset statement_timeout');
    for (const err of [syntax, divisionByZero, cancelled, new DomainError('slot_unavailable'), new Error('boom'), undefined, 'text']) {
      expect(isDatabaseUnreachable(err), String((err as Error)?.message ?? err)).toBe(false);
    }
  });
});
