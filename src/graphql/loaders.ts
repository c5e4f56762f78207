import { notFound } from '../platform/errors.ts';

/** Batch results in the order asked; an id this reseller cannot see is a not-found error, never another's row. */
export function inRequestedOrder<T extends { id: string }>(ids: readonly string[], rows: T[]): (T | Error)[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? notFound('object', id));
}
