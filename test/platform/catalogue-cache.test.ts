import { afterEach, describe, expect, it } from 'vitest';
import { CatalogueCache } from '../../src/platform/catalogue-cache.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { createProvider } from '../support/catalog.ts';

// The rules of rows kept by a process (src/platform/catalogue-cache.ts,
// docs/adr/0032-catalogue-rows-kept-by-process.md) that a request cannot show in a test's time: the
// age limit, the bound, a read that began before a change, a table without the trigger. Each cache
// here listens on the app's real database, whose migrations made the trigger; test/graphql/catalogue-cache.test.ts
// holds the process's own cache to the rest through GraphQL.

const app = useApp();
const log = createLogger({ LOG_LEVEL: 'silent' });
const caches: CatalogueCache[] = [];

interface Row {
  id: string;
  name: string;
}

/** A cache listening on the app's database, with what it heard; resolves once it listens. */
async function listening(opts: { maxAgeMs?: number; maxRows?: number } = {}) {
  const heard: string[] = [];
  const cache = new CatalogueCache({ url: app.databaseUrl, log, heard: (table) => heard.push(table), ...opts });
  caches.push(cache);
  await cache.start();
  expect(cache.listening).toBe(true);
  /** Waits until the cache has heard one more notification naming `table` than it had when called. */
  const next = async (table: string, change: () => Promise<unknown>) => {
    const before = heard.filter((t) => t === table).length;
    await change();
    for (let i = 0; i < 400 && heard.filter((t) => t === table).length === before; i++) await new Promise((r) => setTimeout(r, 25));
    expect(heard.filter((t) => t === table).length, `a notification naming ${table} within 10 s`).toBe(before + 1);
  };
  return { cache, next };
}

const kept = (cache: CatalogueCache, id: string) => cache.shelf<Row>('provider')?.get(id);

afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.stop()));
});

describe('rows kept by a process', () => {
  it('are read again once older than the age limit, whatever was heard', async () => {
    const { cache } = await listening({ maxAgeMs: 300 });
    cache.shelf<Row>('provider')!.keep([{ id: 'prv_aged', name: 'Aged' }]);
    expect(kept(cache, 'prv_aged')).toEqual({ id: 'prv_aged', name: 'Aged' });
    await new Promise((r) => setTimeout(r, 400));
    expect(kept(cache, 'prv_aged')).toBeUndefined();
  });

  it('are not kept from a read that began before a change was heard; a read that begins after keeps them', async () => {
    const { cache, next } = await listening();
    const before = cache.shelf<Row>('provider')!;
    await next('provider', () => createProvider(app, { name: 'Changed meanwhile' }));
    const after = cache.shelf<Row>('provider')!;
    // The older read ends after the newer one began: what it read is not kept.
    before.keep([{ id: 'prv_old', name: 'Read before the change' }]);
    expect(kept(cache, 'prv_old')).toBeUndefined();
    after.keep([{ id: 'prv_old', name: 'Read after it' }]);
    expect(kept(cache, 'prv_old')).toEqual({ id: 'prv_old', name: 'Read after it' });
  });

  it('are forgotten by a change to their table, and not by a notification naming no kept table', async () => {
    const { cache, next } = await listening();
    cache.shelf<Row>('provider')!.keep([{ id: 'prv_stays', name: 'Stays' }]);
    await next('other', () => app.sql(`select pg_notify('catalogue_changed', 'booking')`));
    expect(kept(cache, 'prv_stays')).toEqual({ id: 'prv_stays', name: 'Stays' });
    await next('provider', () => app.sql(`update provider set name = name where false`));
    expect(kept(cache, 'prv_stays')).toBeUndefined();
  });

  it('are at most the bound per table: a full table is forgotten, then kept again', async () => {
    const { cache } = await listening({ maxRows: 3 });
    const rows = [1, 2, 3, 4].map((i) => ({ id: `prv_${i}`, name: `Row ${i}` }));
    cache.shelf<Row>('provider')!.keep(rows.slice(0, 3));
    expect(rows.slice(0, 3).map((r) => kept(cache, r.id))).toEqual(rows.slice(0, 3));
    cache.shelf<Row>('provider')!.keep([rows[3]]);
    expect(rows.map((r) => kept(cache, r.id))).toEqual([undefined, undefined, undefined, rows[3]]);
  });

  it('are never of a table without the trigger, nor before the connection listens or after it stopped', async () => {
    const idle = new CatalogueCache({ url: app.databaseUrl, log });
    caches.push(idle);
    expect(idle.listening).toBe(false);
    expect(idle.shelf<Row>('provider')).toBeUndefined();
    const { cache } = await listening();
    expect(cache.shelf<Row>('booking')).toBeUndefined();
    cache.shelf<Row>('provider')!.keep([{ id: 'prv_stopped', name: 'Stopped' }]);
    await cache.stop();
    expect(cache.listening).toBe(false);
    expect(kept(cache, 'prv_stopped')).toBeUndefined();
  });
});
