import type { EntityManager } from '@mikro-orm/postgresql';
import { inTransaction, preparedRead, preparedWrite, withTransaction, type TxCtx, type TxEm } from './engine/index.ts';
import { loadConfig } from '../config.ts';
import { newId } from '../platform/ids.ts';
import { createLogger } from '../platform/logger.ts';
import { newRequestId } from '../platform/request-context.ts';
import { localDateOf, localTimeOf, addDays } from '../platform/time.ts';
import { ResellerSchema } from '../modules/resellers/resellers.entity.ts';
import { createApiKey, createReseller, fundReseller } from '../modules/resellers/index.ts';
import { PassPackageSchema, type Duration, type PassCategory, type PaymentModel } from '../modules/passes/passes.entity.ts';
import { issuePass } from '../modules/passes/index.ts';
import { ProviderSchema } from '../modules/providers/providers.entity.ts';
import { findProviders } from '../modules/providers/index.ts';
import { slotAt } from '../modules/spa/index.ts';
import { businessAccountBalance } from '../modules/ledger/index.ts';
import { bookClass } from '../modules/bookings/index.ts';
import { createCreditPackage } from '../modules/credits/index.ts';
import { importCatalog } from '../modules/catalog/index.ts';
import { buildDemoCatalog, type DemoCity } from './demo-catalog.ts';

export interface DemoCatalogSummary {
  providers: number;
  gyms: number;
  spas: number;
  spa_services: number;
  copay_options: number;
  class_categories: number;
  classes: number;
  class_instances: number;
  cities: (DemoCity & { providers: number })[];
}

/** A demo client and the pass issued to it (through the API's own issue-pass use case). */
export interface DemoClient {
  id: string;
  name: string;
  email: string;
  issued_pass_id: string;
  pass_id: string;
  pass_name: string;
  /** GYM visits left this month (the counter's month is the UTC month); null when the pass has no monthly cap. */
  gym_visits_left: number | null;
}

/** A class instance to book; date and time are local to the provider's zone. */
export interface DemoClass {
  class_instance_id: string;
  class_name: string;
  provider_id: string;
  provider_name: string;
  tier: string;
  date: string;
  time: string;
  timezone: string;
  spots_left: number;
}

/** A free spa slot (checked against the spa's opening hours and rooms) and the services to book in it. */
export interface DemoSpaSlot {
  spa_id: string;
  spa_name: string;
  tier: string;
  service_ids: string[];
  service_names: string[];
  date: string;
  time: string;
  timezone: string;
}

/**
 * What a reseller's demo clients can book, one target per path of README "First hour"; null where
 * the catalogue (an imported one) has nothing that fits. Every class and slot starts a day or more
 * after the seed, so a cancellation within the first hours gets the full refund.
 */
export interface DemoBookings {
  /** Holds Premium Quarterly: gyms up to GOLD without a monthly cap, SILVER and GOLD spas with 200 credits. */
  client_id: string;
  /** Holds Flex Monthly (BRONZE and SILVER gyms, 8 visits a month) with one of the month's visits left. */
  visits_client_id: string;
  /** At a gym both passes cover, with spots free: booked now. */
  class: DemoClass | null;
  /** At a gym the Premium pass does not cover that sells co-pay options: copay_required. */
  copay_class: DemoClass | null;
  /** At a gym both passes cover, one spot left: the second booking is 409 class_full. */
  last_spot_class: DemoClass | null;
  /** At a spa the Premium pass covers: booked now, the services' credits debited. */
  spa: DemoSpaSlot | null;
  /** At a spa no demo pass covers, its services priced in the reseller's currency: a co-pay session. */
  copay_spa: DemoSpaSlot | null;
}

export interface DemoSeed {
  resellers: {
    id: string;
    name: string;
    currency: string;
    balance: number;
    api_key: string;
    passes: { id: string; name: string; payment_model: PaymentModel }[];
    /** Credit packages its clients can buy (docs/partner-guide.md "Credits"), in the reseller's currency. */
    credit_packages: { id: string; name: string; credits: number; price: number }[];
    clients: DemoClient[];
    bookings: DemoBookings;
  }[];
  /** Null when the database already held a catalogue (imported): the demo adds none then. */
  catalog: DemoCatalogSummary | null;
}

interface PackageSpec {
  name: string;
  description: string;
  price: number;
  duration: Duration;
  paymentModel: PaymentModel;
  categories: PassCategory[];
}

const packages: PackageSpec[] = [
  {
    name: 'Flex Monthly',
    description: 'Pay-as-you-go gym access with a monthly spa credit allowance.',
    price: 4900,
    duration: 'MONTHLY',
    paymentModel: 'PAYG',
    categories: [
      { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: 8, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 60 },
    ],
  },
  {
    name: 'Premium Quarterly',
    description: 'Prepaid unlimited gym access and spa credits, billed per quarter.',
    price: 29900,
    duration: 'QUARTERLY',
    paymentModel: 'PREPAID',
    categories: [
      { type: 'GYM', tiers: ['BRONZE', 'SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 200 },
    ],
  },
];

/** The credit packages of every demo reseller (docs/partner-guide.md "Credits"); prices in minor units of its currency. */
const demoCreditPackages = [
  { name: 'Starter Credits', credits: 50, price: 2500 },
  { name: 'Plus Credits', credits: 120, price: 5500 },
  { name: 'Max Credits', credits: 300, price: 12000 },
];

/** The business balance each demo reseller is left with, after the demo clients' passes are paid. */
const DEMO_BALANCE = 1_000_000;

/** The demo clients of every reseller: a Premium holder, and a Flex holder short of gym visits. */
const demoClients = [
  { first_name: 'Alex', last_name: 'Morgan', email: 'alex.morgan@example.com', pass: 'Premium Quarterly' },
  { first_name: 'Sam', last_name: 'Rivera', email: 'sam.rivera@example.com', pass: 'Flex Monthly' },
] as const;

/** What issuing the demo clients' PREPAID passes debits from each reseller's business account. */
const prepaidPrices = demoClients
  .map((c) => packages.find((p) => p.name === c.pass)!)
  .filter((p) => p.paymentModel === 'PREPAID')
  .reduce((sum, p) => sum + p.price, 0);

/**
 * Demo data on an empty database; returns the API keys (shown once) or null when data exists.
 * Besides resellers, passes and the catalogue, each reseller gets demo clients holding issued
 * passes and a target for every booking path (DemoBookings), all through the use cases the API runs.
 */
export async function seedDemo(em: EntityManager, at: Date): Promise<DemoSeed | null> {
  if ((await em.count(ResellerSchema, {})) > 0) return null;
  // Use cases read neither the config nor the log; a request would carry both.
  const deps = { config: loadConfig({}), log: createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' }) };
  return withTransaction(em, async (tx) => {
    const seeded: DemoSeed = { resellers: [], catalog: null };
    if ((await tx.count(ProviderSchema, {})) === 0) seeded.catalog = await seedDemoCatalog(tx, at);
    const catalogue = await readCatalogue(tx, at, seeded.catalog?.cities[0]?.name);
    for (const name of ['Northwind Wellness', 'Harbor Benefits']) {
      const reseller = await createReseller(tx, { name, currency: 'EUR' }, at);
      await fundReseller(tx, reseller.id, DEMO_BALANCE + prepaidPrices, at, 'Demo funding');
      const key = await createApiKey(tx, reseller.id, at, 'demo');
      const passes = packages.map((p) =>
        tx.create(PassPackageSchema, {
          id: newId('pass', at.getTime()),
          resellerId: reseller.id,
          name: p.name,
          description: p.description,
          price: p.price,
          currency: reseller.currency,
          duration: p.duration,
          paymentModel: p.paymentModel,
          categories: p.categories,
          createdAt: at,
        }),
      );
      const creditPackages = demoCreditPackages.map((p) =>
        createCreditPackage(tx, { ...p, resellerId: reseller.id, currency: reseller.currency, createdAt: at }),
      );
      await tx.flush();
      const caller = { kind: 'reseller' as const, resellerId: reseller.id, apiKeyId: key.id, currency: reseller.currency };
      // A context per use case call, run in inTransaction as the API runs one per request (here a
      // savepoint of the seed's transaction, which ends with the writes the use case held back).
      const run: RunUseCase = (useCase) =>
        inTransaction({ em: tx, caller, clock: { now: () => at }, ...deps, requestId: newRequestId() }, useCase);
      const { clients, bookings } = await seedClients(run, reseller.currency, passes, catalogue, at);
      seeded.resellers.push({
        id: reseller.id,
        name,
        currency: reseller.currency,
        balance: await businessAccountBalance(tx, reseller.id),
        api_key: key.secret,
        passes: passes.map((p) => ({ id: p.id, name: p.name, payment_model: p.paymentModel })),
        credit_packages: creditPackages.map((p) => ({ id: p.id, name: p.name, credits: p.credits, price: p.price })),
        clients,
        bookings,
      });
    }
    return seeded;
  });
}

type PassRow = { id: string; name: string; categories: PassCategory[] };

/** Runs one use case in a transaction of its own context (a savepoint of the seed's transaction). */
type RunUseCase = <T>(useCase: (tx: TxCtx) => Promise<T>) => Promise<T>;

/** Issues the demo clients' passes, picks their booking targets and uses up Sam's gym visits but one. */
async function seedClients(
  run: RunUseCase,
  currency: string,
  passes: PassRow[],
  catalogue: Catalogue,
  at: Date,
): Promise<{ clients: DemoClient[]; bookings: DemoBookings }> {
  const clients: DemoClient[] = [];
  for (const c of demoClients) {
    const pass = passes.find((p) => p.name === c.pass)!;
    const { issuedPass, client } = await run((tx) =>
      issuePass(tx, { pass_id: pass.id, first_name: c.first_name, last_name: c.last_name, email: c.email }),
    );
    clients.push({
      id: client.id,
      name: `${c.first_name} ${c.last_name}`,
      email: client.email,
      issued_pass_id: issuedPass.id,
      pass_id: pass.id,
      pass_name: pass.name,
      gym_visits_left: pass.categories.find((k) => k.type === 'GYM')?.visits_allowed ?? null,
    });
  }
  const [premium, flex] = demoClients.map((c) => passes.find((p) => p.name === c.pass)!);
  const [alex, sam] = clients;
  const bothGyms = (tier: string) => covers(premium, 'GYM', tier) && covers(flex, 'GYM', tier);
  const dayAhead = at.getTime() + 24 * 3600_000;
  const upcoming = catalogue.instances.filter((i) => i.startsAt.getTime() >= dayAhead && !catalogue.taken.has(i.id));
  const roomy = (i: InstanceRow) => i.capacity - i.spotsTaken >= 3;
  const bookings: DemoBookings = {
    client_id: alex.id,
    visits_client_id: sam.id,
    class: take(
      catalogue,
      upcoming.find((i) => bothGyms(i.tier) && roomy(i)),
    ),
    copay_class: take(
      catalogue,
      upcoming.find((i) => !covers(premium, 'GYM', i.tier) && catalogue.copayProviders(currency).has(i.providerId) && roomy(i)),
    ),
    last_spot_class: take(
      catalogue,
      upcoming.find((i) => bothGyms(i.tier) && i.capacity - i.spotsTaken === 1),
    ),
    spa: await run((tx) =>
      spaSlot(
        tx,
        catalogue,
        at,
        (spa) => covers(premium, 'SPA', spa.tier),
        (s) => s.credits <= (premium.categories.find((k) => k.type === 'SPA')?.credit_allocated ?? 0),
      ),
    ),
    copay_spa: await run((tx) =>
      spaSlot(
        tx,
        catalogue,
        at,
        (spa) =>
          demoClients.every(
            (c) =>
              !covers(
                passes.find((p) => p.name === c.pass)!,
                'SPA',
                spa.tier,
              ),
          ),
        (s) => s.copayAmount !== null && s.currency === currency,
      ),
    ),
  };

  // Sam has booked classes this month already: all of the month's visits but one are taken.
  const allowed = sam.gym_visits_left ?? 0;
  const classes = new Set<string>();
  let booked = 0;
  for (const i of catalogue.instances) {
    if (booked >= allowed - 1) break;
    if (
      catalogue.taken.has(i.id) ||
      classes.has(i.classId) ||
      !covers(flex, 'GYM', i.tier) ||
      !roomy(i) ||
      i.startsAt.getTime() < at.getTime() + 3600_000
    )
      continue;
    const result = await run((tx) => bookClass(tx, { class_instance_id: i.id, client_id: sam.id }));
    if (!result.booking) throw new Error(`demo booking of ${i.id} for ${sam.id} was not booked now`);
    catalogue.taken.add(i.id);
    classes.add(i.classId);
    booked++;
  }
  if (sam.gym_visits_left !== null) sam.gym_visits_left -= booked;
  return { clients, bookings };
}

const covers = (pass: { categories: PassCategory[] }, type: 'GYM' | 'SPA', tier: string) =>
  pass.categories.some((c) => c.type === type && c.tiers.some((t) => t.toUpperCase() === tier));

interface InstanceRow {
  id: string;
  classId: string;
  className: string;
  providerId: string;
  providerName: string;
  tier: string;
  timezone: string;
  startsAt: Date;
  capacity: number;
  spotsTaken: number;
}
interface SpaRow {
  id: string;
  name: string;
  tier: string;
  timezone: string;
  services: ServiceRow[];
}
interface ServiceRow {
  id: string;
  name: string;
  credits: number;
  copayAmount: number | null;
  currency: string;
  durationMinutes: number;
}

/** The catalogue the targets are picked from (the first city's, when the demo made it), soonest first. */
interface Catalogue {
  instances: InstanceRow[];
  spas: SpaRow[];
  copayProviders(currency: string): Set<string>;
  /** Class instances and spas already given to a target or booked: each reseller gets its own. */
  taken: Set<string>;
}

async function readCatalogue(em: TxEm, at: Date, city: string | undefined): Promise<Catalogue> {
  const inCity = city === undefined ? '' : 'and p.city = ?';
  const cityParam = city === undefined ? [] : [city];
  const instances = await preparedRead<{
    id: string;
    class_id: string;
    class_name: string;
    provider_id: string;
    provider_name: string;
    tier: string;
    timezone: string;
    starts_at: Date;
    capacity: number;
    spots_taken: number;
  }>(
    em,
    `select i.id, i.class_id, c.name as class_name, p.id as provider_id, p.name as provider_name, p.tier, p.timezone,
            i.starts_at, i.capacity, i.spots_taken
       from class_instance i join class c on c.id = i.class_id join provider p on p.id = c.provider_id
      where p.category = 'GYM' and i.status = 'SCHEDULED' and i.starts_at > ? ${inCity}
      order by i.starts_at, i.id`,
    [at, ...cityParam],
  );
  const services = await preparedRead<{
    provider_id: string;
    provider_name: string;
    tier: string;
    timezone: string;
    id: string;
    name: string;
    credits: string;
    copay_amount: string | null;
    currency: string;
    duration_minutes: number;
  }>(
    em,
    `select p.id as provider_id, p.name as provider_name, p.tier, p.timezone, s.id, s.name, s.credits, s.copay_amount, s.currency, s.duration_minutes
       from provider p join spa_service s on s.provider_id = p.id
      where p.category = 'SPA' ${inCity}
      order by p.id, s.credits, s.id`,
    cityParam,
  );
  const copay = await preparedRead<{ provider_id: string; currency: string }>(
    em,
    'select distinct provider_id, currency from copay_option',
    [],
  );
  const spas = new Map<string, SpaRow>();
  for (const s of services) {
    const spa = spas.get(s.provider_id) ?? { id: s.provider_id, name: s.provider_name, tier: s.tier, timezone: s.timezone, services: [] };
    spa.services.push({
      id: s.id,
      name: s.name,
      credits: Number(s.credits),
      copayAmount: s.copay_amount === null ? null : Number(s.copay_amount),
      currency: s.currency.trim(),
      durationMinutes: s.duration_minutes,
    });
    spas.set(s.provider_id, spa);
  }
  return {
    instances: instances.map((i) => ({
      id: i.id,
      classId: i.class_id,
      className: i.class_name,
      providerId: i.provider_id,
      providerName: i.provider_name,
      tier: i.tier,
      timezone: i.timezone,
      startsAt: new Date(i.starts_at),
      capacity: i.capacity,
      spotsTaken: i.spots_taken,
    })),
    spas: [...spas.values()],
    copayProviders: (currency) => new Set(copay.filter((o) => o.currency.trim() === currency).map((o) => o.provider_id)),
    taken: new Set(),
  };
}

function take(catalogue: Catalogue, i: InstanceRow | undefined): DemoClass | null {
  if (!i) return null;
  catalogue.taken.add(i.id);
  return {
    class_instance_id: i.id,
    class_name: i.className,
    provider_id: i.providerId,
    provider_name: i.providerName,
    tier: i.tier,
    date: localDateOf(i.startsAt, i.timezone),
    time: localTimeOf(i.startsAt, i.timezone),
    timezone: i.timezone,
    spots_left: i.capacity - i.spotsTaken,
  };
}

/** Afternoon first: a slot most spas have open on most days. */
const preferredTimes = ['14:00', '15:00', '16:00', '12:00', '17:00', '11:00', '18:00', '10:00'];

/**
 * The first spa that fits with one service that fits (the fewest credits), at a free slot one to
 * seven days ahead, as the spa's availability shows it.
 */
async function spaSlot(
  ctx: TxCtx,
  catalogue: Catalogue,
  at: Date,
  spaFits: (spa: SpaRow) => boolean,
  serviceFits: (s: ServiceRow) => boolean,
): Promise<DemoSpaSlot | null> {
  for (const row of catalogue.spas) {
    if (catalogue.taken.has(row.id) || !spaFits(row)) continue;
    const service = row.services.find(serviceFits);
    if (!service) continue;
    const [spa] = await findProviders(ctx.em, [row.id]);
    const today = localDateOf(at, spa.timezone);
    for (let d = 1; d <= 7; d++) {
      const date = addDays(today, d);
      for (const time of preferredTimes) {
        const slot = await slotAt(ctx.em, spa, date, time, service.durationMinutes, at);
        if (!slot?.available || slot.startsAt.getTime() < at.getTime() + 24 * 3600_000) continue;
        catalogue.taken.add(row.id);
        return {
          spa_id: spa.id,
          spa_name: spa.name,
          tier: spa.tier,
          service_ids: [service.id],
          service_names: [service.name],
          date,
          time,
          timezone: spa.timezone,
        };
      }
    }
  }
  return null;
}

/** The demo catalogue through the import path: validated like any file, written in bulk. */
async function seedDemoCatalog(em: EntityManager, at: Date): Promise<DemoCatalogSummary> {
  const stored = await preparedRead<{ id: string; name: string }>(em, 'select id, name from class_category', []);
  const { catalog, cities, heldSpots } = buildDemoCatalog(at, new Map(stored.map((c) => [c.name, c.id])));
  await importCatalog(em, catalog, { at });
  // Some instances nearly or completely full, as if the provider's own members held the spots,
  // so "few spots left" and class_full are reachable in the demo.
  await preparedWrite(
    em,
    `update class_instance i set spots_taken = r.taken
       from jsonb_to_recordset(?::jsonb) as r(id text, taken int) where i.id = r.id`,
    [JSON.stringify([...heldSpots].map(([id, taken]) => ({ id, taken })))],
  );
  const gyms = catalog.providers.filter((p) => p.category === 'GYM').length;
  return {
    providers: catalog.providers.length,
    gyms,
    spas: catalog.providers.length - gyms,
    spa_services: catalog.spa_services.length,
    copay_options: catalog.copay_options.length,
    class_categories: catalog.class_categories.length + stored.length,
    classes: catalog.classes.length,
    class_instances: catalog.class_instances.length,
    cities,
  };
}
