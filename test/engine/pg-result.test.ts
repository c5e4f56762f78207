import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';

// pg's result rows are built on a plain object in this process (src/db/engine/pg-result.ts): the rows
// must be what pg's own way makes, for every column name, `__proto__` included.

const app = useApp();
let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
});
afterAll(() => client.end());

describe('pg result rows', () => {
  it("hold each column as an own property, in pg's key order, the last of a repeated name, typed by pg's parsers", async () => {
    const [row] = await app.sql<Record<string, unknown>>(
      `select 1::int as b, 'x'::text as a, 2::bigint as "10", null::text as "constructor", 3::int as a, true as "hasOwnProperty",
              '2026-03-01T10:00:00Z'::timestamptz as at, '{"k": 1}'::jsonb as doc`,
    );
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    // Integer-like keys come first (as in any object), then the others in column order.
    expect(Object.keys(row)).toEqual(['10', 'b', 'a', 'constructor', 'hasOwnProperty', 'at', 'doc']);
    // The ORM's connection has parsers of its own (timestamps stay text); a plain client has pg's.
    expect(row).toEqual({ 10: '2', b: 1, a: 3, constructor: null, hasOwnProperty: true, at: '2026-03-01 10:00:00+00', doc: { k: 1 } });
    const {
      rows: [plain],
    } = await client.query(`select '2026-03-01T10:00:00Z'::timestamptz as at, 2::bigint as n`);
    expect(plain).toEqual({ at: new Date('2026-03-01T10:00:00Z'), n: '2' });
  });

  it("a column named __proto__ is an own property, not the row's prototype (pg's own path)", async () => {
    for (const rows of [
      await app.sql<Record<string, unknown>>(`select 1 as "__proto__", 2 as a`),
      (await client.query(`select 1 as "__proto__", 2 as a`)).rows,
    ]) {
      const [row] = rows;
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(1);
      expect(row.a).toBe(2);
    }
  });

  it('an empty result and a statement without rows answer as pg does', async () => {
    await expect(app.sql('select 1 as a where false')).resolves.toEqual([]);
    const { rows, fields } = await client.query('select 1 as a, 2 as b where false');
    expect(rows).toEqual([]);
    expect(fields.map((f) => f.name)).toEqual(['a', 'b']);
    const created = await client.query('create temporary table t (a int)');
    expect(created.rows).toEqual([]);
  });
});
