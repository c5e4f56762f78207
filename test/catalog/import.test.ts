import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import { importCatalog } from '../../src/modules/catalog/catalog.import.ts';
import { CatalogRejected } from '../../src/modules/catalog/catalog.validate.ts';
import { useApp } from '../support/app.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { v3 } from '../support/http.ts';
import { killStartedProcesses, runCli, type CliRun } from '../ops/processes.ts';

// `catalog import FILE` as an operator runs it (a child process on this test's database), then the
// imported catalogue read back through the REST surface and the rows.

const T = 60_000;
const app = useApp();
let reseller: TestReseller;
let dir: string;

beforeAll(async () => {
  reseller = await createReseller(app, { currency: 'EUR' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalog-import-'));
});
afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
});

function writeFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const importFile = (file: string): Promise<CliRun> => runCli(['catalog', 'import', file], { DATABASE_URL: app.databaseUrl });

const tables = ['provider', 'copay_option', 'spa_service', 'class_category', 'class', 'class_instance', 'pass_package'];
async function footprint(): Promise<Record<string, number>> {
  const [row] = await app.sql<Record<string, string>>(`select ${tables.map((t) => `(select count(*) from ${t}) as ${t}`).join(', ')}`);
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

const weekHours = {
  mon: [{ open: '06:00', close: '22:00' }],
  tue: [{ open: '06:00', close: '22:00' }],
  sat: [
    { open: '08:00', close: '12:00' },
    { open: '14:00', close: '20:00' },
  ],
};

/** A small catalogue: a Berlin gym with a class over the spring-forward weekend, a New York spa, a pass. */
function validCatalog() {
  const gym = newId('provider');
  const spa = newId('provider');
  const yoga = newId('classCategory');
  const flow = newId('class');
  return {
    ids: { gym, spa, yoga, flow },
    file: {
      format: 1,
      providers: [
        {
          id: gym,
          name: 'Kiez Athletics',
          category: 'GYM',
          tier: 'GOLD',
          address: 'Torstraße 1, 10119 Berlin',
          city: 'Berlin',
          country: 'DE',
          lat: 52.529,
          lon: 13.401,
          timezone: 'Europe/Berlin',
          opening_hours: weekHours,
        },
        {
          id: spa,
          name: 'Harbor Day Spa',
          category: 'SPA',
          tier: 'SILVER',
          description: 'Massages and facials',
          address: '1 Water St, New York, NY 10004',
          city: 'New York',
          country: 'US',
          lat: 40.703,
          lon: -74.011,
          timezone: 'America/New_York',
          opening_hours: weekHours,
          room_capacity: 3,
          cancellation_policy: { free_cancellation_hours: 24, late_cancellation_refund_percent: 50 },
        },
      ],
      copay_options: [
        {
          id: newId('copayOption'),
          provider_id: gym,
          name: 'Day pass',
          currency: 'EUR',
          tiers: ['GOLD'],
          max_visits: 1,
          visit_duration_days: 1,
          client_copay_amount: 1500,
          client_copay_credits: 15,
        },
      ],
      spa_services: [
        {
          id: newId('service'),
          provider_id: spa,
          name: 'Swedish Massage',
          duration_minutes: 60,
          credits: 50,
          copay_amount: 5000,
          currency: 'EUR',
        },
        { id: newId('service'), provider_id: spa, name: 'Facial', duration_minutes: 45, credits: 35, currency: 'EUR' },
      ],
      class_categories: [{ id: yoga, name: `Yoga ${gym.slice(-6)}`, description: 'Breathe' }],
      classes: [{ id: flow, provider_id: gym, category_id: yoga, name: 'Vinyasa Flow', duration_minutes: 60 }],
      class_instances: [
        // Berlin springs forward on 2026-03-29: 10:00 is UTC+2 that day, UTC+1 the day before.
        { id: newId('classInstance'), class_id: flow, date: '2026-03-28', time: '10:00', capacity: 8 },
        { id: newId('classInstance'), class_id: flow, date: '2026-03-29', time: '10:00', capacity: 8 },
        { id: newId('classInstance'), class_id: flow, date: '2026-03-30', time: '18:30', capacity: 20, status: 'CANCELLED' },
      ],
      pass_packages: [
        {
          id: newId('pass'),
          reseller_id: reseller.id,
          name: 'Imported Gold',
          price: 9900,
          currency: 'EUR',
          duration: 'MONTHLY',
          payment_model: 'PREPAID',
          categories: [
            { type: 'GYM', tiers: ['GOLD'], visits_allowed: 12, credit_allocated: 0 },
            { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 80 },
          ],
        },
      ],
    },
  };
}

const allNew = (n: number) => ({ inserted: n, updated: 0, unchanged: 0 });

describe('catalog import FILE', () => {
  let loaded: ReturnType<typeof validCatalog>;

  it(
    'loads every record of a valid file, which the REST surface then serves',
    async () => {
      loaded = validCatalog();
      const before = await footprint();
      const run = await importFile(writeFile('valid.json', loaded.file));
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        imported: {
          providers: allNew(2),
          copay_options: allNew(1),
          spa_services: allNew(2),
          class_categories: allNew(1),
          classes: allNew(1),
          class_instances: allNew(3),
          pass_packages: allNew(1),
        },
      });
      const after = await footprint();
      expect(Object.fromEntries(tables.map((t) => [t, after[t] - before[t]]))).toEqual({
        provider: 2,
        copay_option: 1,
        spa_service: 2,
        class_category: 1,
        class: 1,
        class_instance: 3,
        pass_package: 1,
      });

      const spa = await v3(app, `/providers/${loaded.ids.spa}`, { key: reseller.key });
      expect(spa.status, spa.text).toBe(200);
      expect(spa.body).toMatchObject({
        object: 'provider',
        id: loaded.ids.spa,
        name: 'Harbor Day Spa',
        category: 'SPA',
        tier: 'SILVER',
        description: 'Massages and facials',
        city: 'New York',
        country: 'US',
        lat: 40.703,
        lon: -74.011,
        timezone: 'America/New_York',
        cancellation_policy: { free_cancellation_hours: 24, late_cancellation_refund_percent: 50 },
      });
      const gym = await v3(app, `/providers/${loaded.ids.gym}`, { key: reseller.key });
      // Defaults of the format: no description, 24 h free cancellation, no late refund.
      expect(gym.body).toMatchObject({
        id: loaded.ids.gym,
        description: '',
        cancellation_policy: { free_cancellation_hours: 24, late_cancellation_refund_percent: 0 },
      });
      const pass = await v3(app, `/passes/${loaded.file.pass_packages[0].id}`, { key: reseller.key });
      expect(pass.status).toBe(200);
      expect(pass.body).toMatchObject({ name: 'Imported Gold', payment_model: 'PREPAID', price: 9900 });

      const instances = await app.sql<{ starts_at: Date; local_date: string; capacity: number; spots_taken: number; status: string }>(
        'select starts_at, local_date::text, capacity, spots_taken, status from class_instance where class_id = ? order by starts_at',
        [loaded.ids.flow],
      );
      expect(instances.map((i) => [new Date(i.starts_at).toISOString(), i.local_date, i.capacity, i.spots_taken, i.status])).toEqual([
        ['2026-03-28T09:00:00.000Z', '2026-03-28', 8, 0, 'SCHEDULED'],
        ['2026-03-29T08:00:00.000Z', '2026-03-29', 8, 0, 'SCHEDULED'],
        ['2026-03-30T16:30:00.000Z', '2026-03-30', 20, 0, 'CANCELLED'],
      ]);
      const [hours] = await app.sql<{ opening_hours: unknown; room_capacity: number }>(
        'select opening_hours, room_capacity from provider where id = ?',
        [loaded.ids.spa],
      );
      expect(hours).toEqual({ opening_hours: weekHours, room_capacity: 3 });
      const [service] = await app.sql<{ copay_amount: string | null }>(
        "select copay_amount from spa_service where name = 'Facial' and provider_id = ?",
        [loaded.ids.spa],
      );
      expect(service.copay_amount).toBeNull();
    },
    T,
  );

  it(
    'prints plain progress counts on stderr when stderr is not a terminal',
    async () => {
      const run = await importFile(writeFile('progress.json', validCatalog().file));
      expect(run.code, run.stderr).toBe(0);
      const progress = run.stderr.split('\n').filter((l) => l.startsWith('catalog import:'));
      expect(progress).toEqual(
        expect.arrayContaining([
          'catalog import: validating records 11/11',
          'catalog import: providers 2/2',
          'catalog import: class_instances 3/3',
          'catalog import: pass_packages 1/1',
        ]),
      );
      expect(run.stderr).not.toContain('\r');
    },
    T,
  );

  it(
    're-importing the same file changes nothing; a changed record is updated in place',
    async () => {
      const file = writeFile('again.json', loaded.file);
      const before = await footprint();
      const [created] = await app.sql<{ created_at: Date }>('select created_at from provider where id = ?', [loaded.ids.gym]);
      const again = await importFile(file);
      expect(again.code, again.stderr).toBe(0);
      const counts = JSON.parse(again.stdout).imported as Record<string, { inserted: number; updated: number; unchanged: number }>;
      expect(Object.values(counts).every((c) => c.inserted === 0 && c.updated === 0)).toBe(true);
      expect(counts.class_instances.unchanged).toBe(3);
      expect(await footprint()).toEqual(before);

      const changed = structuredClone(loaded.file);
      changed.providers[0].name = 'Kiez Athletics Mitte';
      changed.class_instances[0].capacity = 12;
      const run = await importFile(writeFile('changed.json', changed));
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).imported).toMatchObject({
        providers: { inserted: 0, updated: 1, unchanged: 1 },
        class_instances: { inserted: 0, updated: 1, unchanged: 2 },
      });
      expect(await footprint()).toEqual(before);
      expect((await v3(app, `/providers/${loaded.ids.gym}`, { key: reseller.key })).body.name).toBe('Kiez Athletics Mitte');
      const [row] = await app.sql<{ created_at: Date }>('select created_at from provider where id = ?', [loaded.ids.gym]);
      expect(row.created_at).toEqual(created.created_at);
    },
    T,
  );

  it(
    'refuses a file with bad records, naming each one by position, and writes nothing',
    async () => {
      const { file } = validCatalog();
      const bad = structuredClone(file) as any;
      bad.providers[1].timezone = 'Mars/Olympus_Mons';
      bad.providers[0].opening_hours = { mon: [{ open: '22:00', close: '06:00' }] };
      delete bad.providers[0].name;
      bad.spa_services[0].id = newId('provider');
      bad.classes[0].category_id = newId('classCategory');
      bad.class_instances[1].time = '02:30'; // does not exist in Berlin on 2026-03-29
      bad.copay_options[0].provider_id = newId('provider');
      bad.pass_packages[0].reseller_id = newId('reseller');
      bad.extra = [];
      const before = await footprint();
      const run = await importFile(writeFile('bad.json', bad));
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      const problems = run.stderr
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.trim());
      expect(run.stderr).toMatch(/catalog import: the catalogue has 8 problems; nothing was written:/);
      expect(problems).toEqual(
        expect.arrayContaining([
          'extra: Unknown section (expected providers, copay_options, spa_services, class_categories, classes, class_instances, pass_packages)',
          'providers[0].name: Missing required field',
          'providers[0].opening_hours.mon[0].close: close must be after open',
          expect.stringMatching(/^providers\[1\]\.timezone: Expected an IANA time zone/),
          expect.stringMatching(/^spa_services\[0\]\.id: Expected a service id: 'svc_'/),
          expect.stringMatching(/^classes\[0\]\.category_id: Unknown class category 'ccat_/),
          expect.stringMatching(/^copay_options\[0\]\.provider_id: Unknown provider 'prov_\w+' \(not in the file nor stored\)$/),
          expect.stringMatching(/^pass_packages\[0\]\.reseller_id: Unknown reseller 'res_/),
        ]),
      );
      // The gym was refused, so its class instance is not checked against its zone (the gap shows
      // once the gym is fixed, below): a refused record is reported once, not again through references.
      expect(problems).toHaveLength(8);
      expect(await footprint()).toEqual(before);
    },
    T,
  );

  it(
    'refuses a local time in the spring-forward gap, and unreadable files, before writing',
    async () => {
      const { file } = validCatalog();
      file.class_instances[1].time = '02:30';
      const before = await footprint();
      const gap = await importFile(writeFile('gap.json', file));
      expect(gap.code).toBe(1);
      expect(gap.stderr).toContain('class_instances[1].time: 02:30 does not exist on 2026-03-29 in Europe/Berlin (the clocks skip it)');
      const broken = await importFile(writeFile('broken.json', '{"providers": ['));
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/is not valid JSON/);
      const missing = await importFile(path.join(dir, 'missing.json'));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/cannot read .*missing\.json/);
      expect(await footprint()).toEqual(before);
    },
    T,
  );
});

describe('importCatalog', () => {
  it('reports at most 50 problems and how many more there are', async () => {
    const providers = Array.from({ length: 60 }, (_, i) => ({ id: `prov_${i}` }));
    const err = await importCatalog(app.orm.em.fork(), { providers }, { at: app.clock.now() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogRejected);
    const rejected = err as CatalogRejected;
    expect(rejected.problems).toHaveLength(50);
    expect(rejected.total).toBeGreaterThan(60 * 5);
    expect(rejected.problems[0].at).toBe('providers[0].id');
  });

  it('refuses a co-pay option or class at a spa and a service at a gym', async () => {
    const { file, ids } = validCatalog();
    file.copay_options[0].provider_id = ids.spa;
    file.spa_services[0].provider_id = ids.gym;
    file.classes[0].provider_id = ids.spa;
    const err = (await importCatalog(app.orm.em.fork(), file, { at: app.clock.now() }).catch((e: unknown) => e)) as CatalogRejected;
    expect(err).toBeInstanceOf(CatalogRejected);
    expect(err.problems.map((p) => `${p.at}: ${p.message}`)).toEqual([
      `copay_options[0].provider_id: Provider '${ids.spa}' is a SPA; copay_options belong to a GYM`,
      `spa_services[0].provider_id: Provider '${ids.gym}' is a GYM; spa_services belong to a SPA`,
      `classes[0].provider_id: Provider '${ids.spa}' is a SPA; classes belong to a GYM`,
    ]);
  });

  it('refuses duplicate ids and names inside a file, a pass moving to another reseller, and capacity below booked spots', async () => {
    const { file, ids } = validCatalog();
    await importCatalog(app.orm.em.fork(), file, { at: app.clock.now() });
    const [instance] = file.class_instances;
    await app.sql('update class_instance set spots_taken = 6 where id = ?', [instance.id]);
    const other = await createReseller(app, { currency: 'EUR' });
    const bad = structuredClone(file);
    bad.class_instances[0].capacity = 5;
    bad.pass_packages[0].reseller_id = other.id;
    bad.providers.push({ ...bad.providers[0] });
    bad.class_categories.push({ ...bad.class_categories[0], id: newId('classCategory') });
    const before = await footprint();
    const err = (await importCatalog(app.orm.em.fork(), bad, { at: app.clock.now() }).catch((e: unknown) => e)) as CatalogRejected;
    expect(err).toBeInstanceOf(CatalogRejected);
    expect(err.problems.map((p) => `${p.at}: ${p.message}`)).toEqual(
      expect.arrayContaining([
        `providers[2].id: Duplicate id '${ids.gym}' (also at providers[0])`,
        `class_categories[1].name: Another category of the file ('${ids.yoga}') is named '${file.class_categories[0].name}'`,
        'class_instances[0].capacity: 6 spots are already booked; capacity cannot go below that',
        `pass_packages[0].reseller_id: Pass '${file.pass_packages[0].id}' belongs to reseller '${reseller.id}'; a pass cannot move to another reseller`,
      ]),
    );
    expect(err.total).toBe(4);
    expect(await footprint()).toEqual(before);
  });

  it('lets records refer to rows already stored, and moves instance dates with a provider that changes zone', async () => {
    const { file, ids } = validCatalog();
    await importCatalog(app.orm.em.fork(), file, { at: app.clock.now() });
    const follow = {
      classes: [{ id: newId('class'), provider_id: ids.gym, category_id: ids.yoga, name: 'Late Flow', duration_minutes: 45 }],
      providers: [{ ...file.providers[0], timezone: 'Pacific/Kiritimati' }], // UTC+14: 09:00Z is the next local day
    };
    const late = newId('classInstance');
    const stored = newId('classInstance');
    const counts = await importCatalog(
      app.orm.em.fork(),
      {
        ...follow,
        class_instances: [
          { id: late, class_id: follow.classes[0].id, date: '2026-04-01', time: '07:00', capacity: 10 },
          // A stored class of the moved provider: its time is read in the zone the file gives.
          { id: stored, class_id: ids.flow, date: '2026-04-02', time: '07:00', capacity: 10 },
        ],
      },
      { at: app.clock.now() },
    );
    expect(counts).toMatchObject({ providers: { updated: 1 }, classes: { inserted: 1 }, class_instances: { inserted: 2 } });
    const dates = await app.sql<{ id: string; local_date: string; starts_at: Date }>(
      'select id, local_date::text, starts_at from class_instance where class_id in (?, ?) order by starts_at',
      [ids.flow, follow.classes[0].id],
    );
    expect(dates.map((d) => d.local_date)).toEqual(['2026-03-28', '2026-03-29', '2026-03-31', '2026-04-01', '2026-04-02']);
    expect(dates.map((d) => [d.id, new Date(d.starts_at).toISOString()]).slice(3)).toEqual([
      [late, '2026-03-31T17:00:00.000Z'],
      [stored, '2026-04-01T17:00:00.000Z'],
    ]);
  });
});
