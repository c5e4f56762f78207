import type { EntityManager } from '@mikro-orm/postgresql';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { openDatabase, type Database } from '../database.ts';
import { onCleanup } from '../lifecycle.ts';
import { newId } from '../../src/platform/ids.ts';
import { createApiKey, createReseller, fundReseller } from '../../src/modules/resellers/index.ts';
import { importCatalog } from '../../src/modules/catalog/catalog.import.ts';
import type { CatalogInput } from '../../src/modules/catalog/catalog.schema.ts';

// The bookings bench's world, made the way an operator makes it (bench/README.md "Bookings"):
// a funded reseller with an API key; through the catalogue import (docs/catalog-format.md) one
// PREPAID annual pass covering GYM and SPA tier BENCH with unlimited visits and a large spa credit
// allocation, gyms with many large class instances, covered spas and co-pay spas (tier COPAY,
// not covered) with a large room capacity, open all day. Clients are issued over HTTP afterwards
// (issueClients), so their wallets are credited by the issue itself and the ledgers equal the balances.
//
// Every request under load must succeed, so the data is spread: a class booking k takes instance
// k mod INSTANCES and client k mod CLIENTS (coprime counts: no pair repeats below their product);
// a spa booking k takes spa k mod SPAS, a day and a quarter hour from k, so each reads the few
// appointments of one spa's day and no two concurrent ones wait on the same spa's lock.

/** Class instances under load (capacity 10,000 each). */
export const INSTANCES = 1000;
/** Clients holding the pass: coprime with INSTANCES, and more than the 1,000 bookings one instance gets in the count. */
export const CLIENTS = 1009;
/** Covered spas and co-pay spas under load, each. */
export const SPAS = 16;
/** Days the spa appointments spread over (from DAY0 on; the pass runs a year); coprime with SPAS. */
export const SPA_DAYS = 301;
/** Quarter-hour starts of a spa day open 00:00–23:59 for a 15-minute service: 00:00 … 23:30. */
export const SLOTS_PER_DAY = 95;
/** Class instances and spa days kept apart for the statement count (each used at most once fresh). */
export const COUNT_UNITS = 16;

/** Days from the seed day to the first appointment: later than any clock skew, within the pass. */
const DAY0 = 2;

export interface Spa {
  id: string;
  serviceId: string;
}

export interface BookingsSeed {
  resellerId: string;
  currency: string;
  apiKey: string;
  passId: string;
  /** Filled by issueClients. */
  clients: { id: string; issuedPassId: string }[];
  instances: string[];
  spas: Spa[];
  copaySpas: Spa[];
  /** For the statement count: its own instances and spas, so the load's data never mixes in. */
  countInstances: string[];
  countSpa: Spa;
  countCopaySpa: Spa;
  /** The seed day, YYYY-MM-DD (UTC). */
  today: string;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (day: string, n: number) => iso(new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000));
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** The date and time of the k-th appointment of a spa family (load: k spreads over SPA_DAYS days). */
export function spaSlot(seed: BookingsSeed, k: number, days = SPA_DAYS): { date: string; time: string } {
  const perRound = days;
  return { date: addDays(seed.today, DAY0 + (k % perRound)), time: hhmm(15 * (Math.floor(k / perRound) % SLOTS_PER_DAY)) };
}

/** The count's day `unit` (DAY0 + unit), with its `j`-th quarter hour. */
export function countSlot(seed: BookingsSeed, unit: number, j: number): { date: string; time: string } {
  return { date: addDays(seed.today, DAY0 + unit), time: hhmm(15 * (j % SLOTS_PER_DAY)) };
}

/** A database of the bench's own (dropped on exit: bench/database.ts), migrated and seeded with this world. */
export async function openBookingsWorld(name: string, progress: (message: string) => void): Promise<{ db: Database; seed: BookingsSeed }> {
  const db = await openDatabase(name, progress);
  onCleanup(() => db.drop());
  progress('migrating and seeding the catalogue …');
  const orm = await openOrm(db.url, 2);
  try {
    await migrate(orm);
    return { db, seed: await seedBookings(orm.em.fork(), new Date()) };
  } finally {
    await orm.close();
  }
}

export async function seedBookings(em: EntityManager, at: Date): Promise<BookingsSeed> {
  const reseller = await createReseller(em, { name: 'Bench Bookings Reseller', currency: 'EUR' }, at);
  // Enough for every PREPAID issue (price 100) and every co-pay confirm (100 each) of any run.
  await em.transactional((tx) => fundReseller(tx, reseller.id, 1_000_000_000_000, at, 'Bench funding'));
  const key = await createApiKey(em, reseller.id, at, 'bench bookings');
  const today = iso(at);
  const t = at.getTime();
  let n = 0;
  const id = (kind: Parameters<typeof newId>[0]) => newId(kind, t + n++);

  const allDay = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ open: '00:00', close: '23:59' }]]));
  const provider = (name: string, category: 'GYM' | 'SPA', tier: string, i: number) => ({
    id: id('provider'),
    name: `${name} ${i + 1}`,
    category,
    tier,
    address: `Benchstraße ${i + 1}, 10115 Berlin`,
    city: 'Berlin',
    country: 'DE',
    lat: 52.52 + i / 1000,
    lon: 13.405,
    timezone: 'UTC',
    opening_hours: allDay,
    room_capacity: category === 'SPA' ? 1000 : 1,
  });
  const gyms = Array.from({ length: 20 }, (_, i) => provider('Bench Gym', 'GYM', 'BENCH', i));
  const spas = Array.from({ length: SPAS + 1 }, (_, i) => provider('Bench Spa', 'SPA', 'BENCH', i));
  const copaySpas = Array.from({ length: SPAS + 1 }, (_, i) => provider('Bench Co-pay Spa', 'SPA', 'COPAY', i));
  const services = [...spas, ...copaySpas].map((p) => ({
    id: id('service'),
    provider_id: p.id,
    name: 'Sauna',
    duration_minutes: 15,
    credits: 1,
    copay_amount: p.tier === 'COPAY' ? 100 : null,
    currency: 'EUR',
  }));
  const category = { id: id('classCategory'), name: `Bench Yoga ${reseller.id.slice(-6)}` };
  const classes = gyms.map((g) => ({
    id: id('class'),
    provider_id: g.id,
    category_id: category.id,
    name: 'Bench Flow',
    duration_minutes: 45,
  }));
  const instance = (i: number) => ({
    id: id('classInstance'),
    class_id: classes[i % classes.length].id,
    date: addDays(today, DAY0 + (i % 60)),
    time: hhmm(6 * 60 + 15 * (i % 48)),
    capacity: 10_000,
  });
  const instances = Array.from({ length: INSTANCES }, (_, i) => instance(i));
  const countInstances = Array.from({ length: COUNT_UNITS }, (_, i) => instance(i));
  const pass = {
    id: id('pass'),
    reseller_id: reseller.id,
    name: 'Bench Unlimited',
    price: 100,
    currency: 'EUR',
    duration: 'ANNUALLY' as const,
    payment_model: 'PREPAID' as const,
    categories: [
      { type: 'GYM' as const, tiers: ['BENCH'], visits_allowed: null, credit_allocated: 0 },
      { type: 'SPA' as const, tiers: ['BENCH'], visits_allowed: null, credit_allocated: 1_000_000 },
    ],
  };
  const catalog: CatalogInput = {
    format: 1,
    providers: [...gyms, ...spas, ...copaySpas],
    spa_services: services,
    class_categories: [category],
    classes,
    class_instances: [...instances, ...countInstances],
    pass_packages: [pass],
  };
  await importCatalog(em, catalog, { at });
  const spa = (p: { id: string }): Spa => ({ id: p.id, serviceId: services.find((s) => s.provider_id === p.id)!.id });
  return {
    resellerId: reseller.id,
    currency: 'EUR',
    apiKey: key.secret,
    passId: pass.id,
    clients: [],
    instances: instances.map((i) => i.id),
    spas: spas.slice(0, SPAS).map(spa),
    copaySpas: copaySpas.slice(0, SPAS).map(spa),
    countInstances: countInstances.map((i) => i.id),
    countSpa: spa(spas[SPAS]),
    countCopaySpa: spa(copaySpas[SPAS]),
    today,
  };
}

/** Issues the pass to CLIENTS new clients over HTTP (POST /issued_passes), a few at a time. */
export async function issueClients(base: string, seed: BookingsSeed): Promise<void> {
  const clients: BookingsSeed['clients'] = new Array(CLIENTS);
  await inParallel(CLIENTS, 8, async (i) => {
    const res = await fetch(`${base}/v3/api/business/reseller/issued_passes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${seed.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ pass_id: seed.passId, first_name: 'Bench', last_name: `Client ${i}`, email: `bench+${i}@example.com` }),
    });
    const body = (await res.json()) as { id: string; client_id: string };
    if (res.status !== 201) throw new Error(`issuing a pass answered ${res.status} ${JSON.stringify(body)}`);
    clients[i] = { id: body.client_id, issuedPassId: body.id };
  });
  seed.clients = clients;
}

/** Runs task(0 … count-1), at most `width` at a time. */
export async function inParallel(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}
