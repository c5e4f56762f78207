import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Which engine an ORM runs (the DB_ENGINE setting): `tuned`, with the parts of src/db/engine that
 * replace or reach into pg, Kysely and MikroORM; `plain`, on their public APIs only. The same
 * statements and transactions either way; only how they reach PostgreSQL differs.
 */
export type EngineMode = 'tuned' | 'plain';

/** The drivers of tuned ORMs (src/db/engine/driver.ts adds itself): an entity manager's engine is its driver's. */
const tunedDrivers = new WeakSet<object>();

export function markTuned(driver: object): void {
  tunedDrivers.add(driver);
}

export const isTuned = (em: EntityManager): boolean => tunedDrivers.has(em.getDriver());
