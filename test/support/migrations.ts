import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { withDatabase } from './global-setup.ts';

/**
 * A new, empty database migrated up to `migration` (by name), for a test of the migration after it
 * on a database that already holds data: `up(name)` applies up to `name` and answers the names it
 * applied; `sql` runs a statement. Closes its ORM when `run` ends.
 */
export async function onDatabaseMigratedTo<T>(
  migration: string,
  run: (db: {
    orm: Orm;
    sql: (query: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
    up: (to: string) => Promise<string[]>;
  }) => Promise<T>,
): Promise<T> {
  const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
  await createDatabaseIfMissing(inject('adminUrl'), database);
  const orm = await openOrm(withDatabase(inject('adminUrl'), database), 2);
  try {
    await orm.migrator.up({ to: migration });
    return await run({
      orm,
      sql: (query, params = []) => orm.em.fork().execute(query, params),
      up: async (to) => (await orm.migrator.up({ to })).map((m) => m.name),
    });
  } finally {
    await orm.close();
  }
}
