import { expect, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { useApp } from '../support/app.ts';

// The connection pool keeps the connections it opened (src/db/orm.ts): pg would close idle ones
// after 10 s, and the next burst would wait for new backends to start and prepare their
// statements again.
const app = useApp();

it('connections opened for a burst are still open, and reused, after 11 s idle (pg closes idle ones after 10 s)', async () => {
  const orm = await openOrm(app.databaseUrl, 3);
  try {
    const backend = async (sleep: number) => {
      const [row] = await orm.em.fork().execute<{ pid: number }[]>('select pg_backend_pid() as pid, pg_sleep(?)', [sleep]);
      return row.pid;
    };
    const opened = new Set(await Promise.all([backend(0.3), backend(0.3), backend(0.3)]));
    expect(opened.size).toBe(3);

    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const live = await app.sql<{ pid: number }>(
      'select pid from pg_stat_activity where pid in (select jsonb_array_elements_text(?::jsonb)::int)',
      [JSON.stringify([...opened])],
    );
    expect(live.map((r) => r.pid).sort()).toEqual([...opened].sort());
    expect(opened.has(await backend(0))).toBe(true);
  } finally {
    await orm.close();
  }
}, 30_000);

// Our connections run without JIT (src/db/orm.ts): a prepared statement whose estimated cost
// passes jit_above_cost was compiled at every execution (40 ms for GET /passes?limit=100 once a
// reseller had over 100 passes, against 2 ms to run it).
it("the pool's connections, in a transaction and out of one, run with jit off", async () => {
  const em = app.orm.em.fork();
  expect(await em.execute('show jit')).toEqual([{ jit: 'off' }]);
  expect(await em.transactional((tx) => tx.execute('show jit'))).toEqual([{ jit: 'off' }]);
});
