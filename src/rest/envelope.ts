import { z } from 'zod';
import type { Page } from '../platform/pagination.ts';

// One list schema per item schema: the OpenAPI document names it `<Item>List`, and zod refuses
// two different schemas under one name in a document.
const lists = new WeakMap<z.ZodType, z.ZodType>();

/** The V3 list envelope (spec 2.1) around an item schema: what `listEnvelope` returns for it. */
export function listOf<I extends z.ZodType>(item: I) {
  const schema = z.object({
    object: z.literal('list').describe('Always `list`'),
    data: z.array(item).describe('The resources of this page'),
    has_more: z.boolean().describe('true when more results exist beyond this page'),
    url: z.string().describe('The path of this list'),
    message: z.string().describe('Human-readable description of the result'),
  });
  const known = lists.get(item) as typeof schema | undefined;
  if (known) return known;
  const id = z.globalRegistry.get(item)?.id;
  const named = schema.meta(id ? { id: `${id}List`, description: `A page of \`${id}\` (spec 2.1 list envelope)` } : {});
  lists.set(item, named);
  return named;
}

/** The V3 list envelope (spec 2.1). `url` is the list's path. */
export function listEnvelope<T, R>(page: Page<T>, url: string, message: string, present: (row: T) => R) {
  return { object: 'list' as const, data: page.data.map(present), has_more: page.hasMore, url, message };
}
