import { describe, expect, it } from 'vitest';
import type { EntityDictionary, EntityName } from '@mikro-orm/core';
import { plainRows } from '../../src/db/engine/plain-rows.ts';
import { CopayOptionSchema, ProviderSchema } from '../../src/modules/providers/providers.entity.ts';
import { PassPackageSchema } from '../../src/modules/passes/passes.entity.ts';
import { SpaServiceSchema } from '../../src/modules/spa/spa.entity.ts';
import { ClassInstanceSchema, ClassSchema } from '../../src/modules/classes/classes.entity.ts';
import { useApp } from '../support/app.ts';
import { createBookingWorld } from '../support/bookings.ts';
import { createClassInstance } from '../support/catalog.ts';

// The rows nothing writes are read as plain objects (src/db/engine/plain-rows.ts): they must carry
// exactly what em.map gives a managed entity of the same row, value for value and type for type
// (Dates, bigints as numbers, jsonb, nulls), for every entity read that way.
const app = useApp();

/** Every row of `table`, through plainRows and through em.map: the same value and type in every property. */
async function expectAsMapped<T extends object>(entity: EntityName<T>, table: string): Promise<void> {
  const em = app.orm.em.fork();
  const rows = await em.execute<Record<string, unknown>[]>(`select * from ${table} order by id`);
  expect(rows.length, table).toBeGreaterThan(0);
  const plain = plainRows(em, entity, rows) as Record<string, unknown>[];
  const props = em
    .getMetadata()
    .get(entity)
    .props.map((p) => p.name);
  rows.forEach((row, i) => {
    const mapped = em.fork().map(entity, row as EntityDictionary<T>) as Record<string, unknown>;
    const expected = Object.fromEntries(props.map((p) => [p, mapped[p]]));
    expect(plain[i], `${table} ${String(row.id)}`).toStrictEqual(expected);
    for (const p of props) expect(typeof plain[i][p], `${table}.${p}`).toBe(typeof mapped[p]);
  });
}

describe('plainRows', () => {
  it('gives each property the value em.map gives it, for every entity read as plain rows', async () => {
    const world = await createBookingWorld(app);
    await createClassInstance(app, world.gym.classId, new Date(app.clock.now().getTime() + 86_400_000), { capacity: 7, spotsTaken: 2 });
    await expectAsMapped(ProviderSchema, 'provider');
    await expectAsMapped(PassPackageSchema, 'pass_package');
    await expectAsMapped(SpaServiceSchema, 'spa_service');
    await expectAsMapped(ClassSchema, 'class');
    await expectAsMapped(ClassInstanceSchema, 'class_instance');
    await expectAsMapped(CopayOptionSchema, 'copay_option');
    // Nulls stay null: the closed spa's service carries no co-pay.
    const [service] = plainRows(
      app.orm.em.fork(),
      SpaServiceSchema,
      await app.orm.em.fork().execute(`select * from spa_service where id = ?`, [world.closedSpa.service]),
    );
    expect(service.copayAmount).toBeNull();
  });
});
