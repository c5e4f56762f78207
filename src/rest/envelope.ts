import type { Page } from '../platform/pagination.ts';

/** The V3 list envelope (spec 2.1). `url` is the list's path. */
export function listEnvelope<T, R>(page: Page<T>, url: string, message: string, present: (row: T) => R) {
  return { object: 'list' as const, data: page.data.map(present), has_more: page.hasMore, url, message };
}
