import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from './clock.ts';
import { preparedRead, withTransaction, type TxEm } from '../db/engine/index.ts';

/** Rows one transaction of a sweep claims; a sweep goes on until a batch comes back short. */
export const SWEEP_BATCH = 200;

/**
 * The background sweeps' loop (expired booking sessions, access codes, hosted sessions, passes):
 * each batch is one transaction that claims up to SWEEP_BATCH rows with `claim` and changes them
 * with `apply`, at the clock's now. `claim` is a SELECT of `id`s ending `FOR UPDATE SKIP LOCKED`
 * whose last two parameters are the now and the batch size: several processes then sweep without
 * doing a row twice, and a request holding a row's lock is never waited for. Returns the sum of
 * what `apply` counted.
 */
export async function sweepInBatches(
  em: EntityManager,
  clock: Clock,
  claim: { sql: string; params?: unknown[] },
  apply: (tx: TxEm, ids: string[], now: Date) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const now = clock.now();
    const { claimed, counted } = await withTransaction(em.fork(), async (tx) => {
      const rows = await preparedRead<{ id: string }>(tx, claim.sql, [...(claim.params ?? []), now, SWEEP_BATCH]);
      return {
        claimed: rows.length,
        counted:
          rows.length === 0
            ? 0
            : await apply(
                tx,
                rows.map((r) => r.id),
                now,
              ),
      };
    });
    total += counted;
    if (claimed < SWEEP_BATCH) return total;
  }
}
