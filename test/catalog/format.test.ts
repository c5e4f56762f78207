import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importCatalog } from '../../src/modules/catalog/catalog.import.ts';
import { progressReporter } from '../../src/modules/catalog/catalog.progress.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// docs/catalog-format.md stays true: its example imports as documented; and the progress output
// an operator sees on a terminal.

const app = useApp();

const doc = fs.readFileSync(new URL('../../docs/catalog-format.md', import.meta.url), 'utf8');

describe('docs/catalog-format.md', () => {
  it('its example file imports (with a real reseller) and its providers are served', async () => {
    const example = /## Example\s+```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const reseller = await createReseller(app);
    const file = JSON.parse(example!.replaceAll('res_01JD8X3M0R6Y5T0ZQ4H2W9V1KM', reseller.id));
    const counts = await importCatalog(app.orm.em.fork(), file, { at: app.clock.now() });
    expect(Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v.inserted]))).toEqual({
      providers: 2,
      copay_options: 1,
      spa_services: 1,
      class_categories: 1,
      classes: 1,
      class_instances: 1,
      pass_packages: 1,
    });
    const res = await v3(app, '/providers/prov_01JD8X3M0R6Y5T0ZQ4H2W9V1KC', { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Kiez Athletics', tier: 'GOLD', timezone: 'Europe/Berlin' });

    // "Running servers see it at once": a provider the server keeps (read twice, the second read
    // from the kept row) answers its re-imported name moments after the import's COMMIT.
    const name = async () => {
      const reply = await gql<{ provider: { name: string } }>(app, reseller.key, 'query($id: ID!) { provider(id: $id) { name } }', {
        id: 'prov_01JD8X3M0R6Y5T0ZQ4H2W9V1KC',
      });
      return reply.body.data!.provider.name;
    };
    expect([await name(), await name()]).toEqual(['Kiez Athletics', 'Kiez Athletics']);
    const renamed = structuredClone(file);
    renamed.providers.find((p: { id: string }) => p.id === 'prov_01JD8X3M0R6Y5T0ZQ4H2W9V1KC').name = 'Kiez Athletics Mitte';
    const again = await importCatalog(app.orm.em.fork(), renamed, { at: app.clock.now() });
    expect(again.providers).toEqual({ inserted: 0, updated: 1, unchanged: 1 });
    const started = performance.now();
    let seen = await name();
    while (seen !== 'Kiez Athletics Mitte' && performance.now() - started < 1000) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await name();
    }
    expect(seen, `still "${seen}" ${Math.round(performance.now() - started)} ms after the import`).toBe('Kiez Athletics Mitte');
  });
});

describe('import progress', () => {
  const sink = (isTTY: boolean) => {
    const chunks: string[] = [];
    return {
      stream: {
        isTTY,
        write: (c: string) => {
          chunks.push(c);
          return true;
        },
      } as unknown as NodeJS.WritableStream & { isTTY: boolean },
      chunks,
    };
  };

  it('on a terminal redraws one bar per stage in place and ends each stage with a newline', () => {
    const { stream, chunks } = sink(true);
    const progress = progressReporter(stream);
    progress('validate', 10, 10);
    progress('providers', 5000, 10000);
    progress('providers', 10000, 10000);
    progress.finish();
    const out = chunks.join('');
    expect(out).toContain('\r\u001b[K[' + '#'.repeat(30) + '] 100% validating records 10/10');
    expect(out).toContain('\r\u001b[K[' + '#'.repeat(15) + '.'.repeat(15) + ']  50% providers 5000/10000');
    expect(out.endsWith('100% providers 10000/10000\n')).toBe(true);
    expect(out.split('\n')).toHaveLength(3);
  });

  it('elsewhere prints plain lines: the first batch, then one per tenth of a stage', () => {
    const { stream, chunks } = sink(false);
    const progress = progressReporter(stream);
    for (let done = 1000; done <= 20_000; done += 1000) progress('providers', done, 20_000);
    progress.finish();
    expect(chunks.join('')).not.toContain('\r');
    expect(chunks).toHaveLength(11);
    expect(chunks[0]).toBe('catalog import: providers 1000/20000\n');
    expect(chunks[1]).toBe('catalog import: providers 2000/20000\n');
    expect(chunks.at(-1)).toBe('catalog import: providers 20000/20000\n');
  });
});
