import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { catalogueMetricsUntil, catalogueSettled, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql } from '../support/http.ts';

// Providers are kept by each process between requests until a change to the table is notified
// (src/platform/catalogue-cache.ts, docs/adr/0032-catalogue-rows-kept-by-process.md): a kept
// provider costs no statement, and a change, whoever makes it, is read once its notification arrives.
// A write's notification arrives some time after its COMMIT: where a test needs it heard before it
// goes on, it waits until the app has heard a later one (catalogueSettled, test/support/catalog.ts).

const app = useApp();
const PROVIDER = 'query Provider($id: ID!) { provider(id: $id) { id name city } }';
let reseller: TestReseller;

/** The provider as GraphQL answers it now, and the statements the app sent that read the provider table. */
async function read(id: string): Promise<{ name: string; city: string; providerStatements: number }> {
  app.queries!.reset();
  const reply = await gql<{ provider: { name: string; city: string } }>(app, reseller.key, PROVIDER, { id });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.errors, reply.text).toBeUndefined();
  const providerStatements = app.queries!.ownStatements.filter((s) => /from provider\b/.test(s)).length;
  return { ...reply.body.data!.provider, providerStatements };
}

/** Reads until `done` holds of the answer, for at most `withinMs`; the last answer and how long it took. */
async function readUntil(id: string, done: (p: { name: string; city: string }) => boolean, withinMs: number) {
  const started = performance.now();
  for (;;) {
    const answer = await read(id);
    const ms = performance.now() - started;
    if (done(answer) || ms > withinMs) return { answer, ms };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the app's catalogue listener listens (after start, or after it was lost). */
const listenerUp = () => catalogueMetricsUntil(app, (m) => m.listening === 1, 'the catalogue listener did not listen');

/** Makes `change` and waits until the app has heard it and everything committed before. */
async function heard<T>(change: () => Promise<T>): Promise<T> {
  const result = await change();
  await catalogueSettled(app);
  return result;
}

beforeAll(async () => {
  reseller = await createReseller(app);
  await listenerUp();
});

describe('providers kept by the process', () => {
  it('a provider read once is answered again without a statement', async () => {
    const provider = await heard(() => createProvider(app, { name: 'Kept Gym', city: 'Lyon' }));
    const first = await read(provider.id);
    expect(first).toMatchObject({ name: 'Kept Gym', city: 'Lyon', providerStatements: 1 });
    const second = await read(provider.id);
    expect(second).toMatchObject({ name: 'Kept Gym', city: 'Lyon', providerStatements: 0 });
  });

  it('a change made by SQL on another connection is read within 1 s, and kept again afterwards', async () => {
    const provider = await heard(() => createProvider(app, { name: 'Before', city: 'Nice' }));
    await read(provider.id);
    expect((await read(provider.id)).providerStatements).toBe(0);
    await app.sql('update provider set name = ? where id = ?', ['After', provider.id]);
    const { answer, ms } = await readUntil(provider.id, (p) => p.name === 'After', 1000);
    expect(answer.name, `still "${answer.name}" after ${Math.round(ms)} ms`).toBe('After');
    expect((await read(provider.id)).providerStatements).toBe(0);
  });

  it('a change rolled back notifies nothing: the kept row stays, and is right', async () => {
    const provider = await heard(() => createProvider(app, { name: 'Stays', city: 'Metz' }));
    await read(provider.id);
    await app
      .sql(`do $$ begin update provider set name = 'Never' where id = '${provider.id}'; raise exception 'undo'; end $$`)
      .catch(() => undefined);
    // Whatever the rolled-back change could have sent is heard before the settling notification.
    await catalogueSettled(app);
    expect(await read(provider.id)).toMatchObject({ name: 'Stays', providerStatements: 0 });
  });

  it('while the listener connection is lost nothing is kept, and a change made meanwhile is read', async () => {
    const provider = await heard(() => createProvider(app, { name: 'Unheard', city: 'Brest' }));
    await read(provider.id);
    const [{ n }] = await app.sql<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'catalogue listener'`,
    );
    expect(n).toBe(1);
    // Made while no connection listens: its notification reaches no one.
    await app.sql('update provider set name = ? where id = ?', ['Heard', provider.id]);
    const { answer, ms } = await readUntil(provider.id, (p) => p.name === 'Heard', 1000);
    expect(answer.name, `still "${answer.name}" after ${Math.round(ms)} ms`).toBe('Heard');
    // Back: kept again, and changes are heard again.
    await listenerUp();
    await read(provider.id);
    expect((await read(provider.id)).providerStatements).toBe(0);
    await app.sql('update provider set city = ? where id = ?', ['Rennes', provider.id]);
    const { answer: after } = await readUntil(provider.id, (p) => p.city === 'Rennes', 1000);
    expect(after).toMatchObject({ name: 'Heard', city: 'Rennes' });
  });
});
