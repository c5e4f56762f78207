import type { TestApp } from '../support/app.ts';
import { v3 } from '../support/http.ts';

/**
 * SQL statements the app sends while `run` runs, as its ORM logger sees them (the app is in-process):
 * the ORM's own and the prepared reads (src/db/engine/prepared-read.ts) alike.
 */
export async function statementsDuring(app: TestApp, run: () => Promise<unknown>): Promise<string[]> {
  const queries = app.queries!;
  queries.reset();
  await run();
  return [...queries.statements];
}

/** Every id of a REST list, paging forward with starting_after until has_more is false. */
export async function pageForward(app: TestApp, key: string, path: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await v3(app, `${path}${sep}limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`, { key });
    if (res.status !== 200) throw new Error(`paging failed: ${res.status} ${res.text}`);
    pages++;
    ids.push(...res.body.data.map((p: { id: string }) => p.id));
    if (!res.body.has_more) return { ids, pages };
    if (pages > 100) throw new Error('paging does not end');
    cursor = res.body.data.at(-1).id;
  }
}

/** Every id before `lastId` (exclusive) of a REST list, paging backward with ending_before. */
export async function pageBackward(app: TestApp, key: string, path: string, limit: number, lastId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = lastId;
  for (let pages = 0; ; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await v3(app, `${path}${sep}limit=${limit}&ending_before=${cursor}`, { key });
    if (res.status !== 200) throw new Error(`paging failed: ${res.status} ${res.text}`);
    ids.unshift(...res.body.data.map((p: { id: string }) => p.id));
    if (!res.body.has_more) return ids;
    if (pages > 100) throw new Error('paging does not end');
    cursor = res.body.data[0].id;
  }
}
