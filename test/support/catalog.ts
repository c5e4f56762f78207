import { newId } from '../../src/platform/ids.ts';
import { localDateOf } from '../../src/platform/time.ts';
import {
  CopayOptionSchema,
  ProviderSchema,
  type OpeningHours,
  type ProviderCategory,
} from '../../src/modules/providers/providers.entity.ts';
import { SpaServiceSchema } from '../../src/modules/spa/spa.entity.ts';
import { ClassCategorySchema, ClassInstanceSchema, ClassSchema } from '../../src/modules/classes/classes.entity.ts';
import type { TestApp } from './app.ts';
import { call } from './http.ts';

// Catalogue factories: what an operator loads (catalog import / seed), written through the ORM.

/** The app's kept-catalogue metrics now (GET /metrics, src/platform/catalogue-cache.ts): whether it listens, the notifications it heard by table. */
export async function catalogueMetrics(app: TestApp): Promise<{ listening: number; provider: number; other: number }> {
  const text = (await call(app, '/metrics')).text;
  const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    listening: value('catalogue_listening'),
    provider: value('catalogue_changes_heard_total{table="provider"}'),
    other: value('catalogue_changes_heard_total{table="other"}'),
  };
}

/** Waits until `done` holds of the app's kept-catalogue metrics, for at most 10 s. */
export async function catalogueMetricsUntil(
  app: TestApp,
  done: (m: Awaited<ReturnType<typeof catalogueMetrics>>) => boolean,
  what: string,
): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (done(await catalogueMetrics(app))) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} within 10 s`);
}

/**
 * Waits until the app listens for catalogue changes and has heard every one committed so far: a
 * write's notification arrives some time after its COMMIT, and a test that counts statements must
 * not have a kept provider forgotten under it. Notifications arrive in commit order, so once one
 * sent now (naming no table) is heard, every earlier one was.
 */
export async function catalogueSettled(app: TestApp): Promise<void> {
  await catalogueMetricsUntil(app, (m) => m.listening === 1, 'the catalogue listener did not listen');
  const { other } = await catalogueMetrics(app);
  await app.sql(`select pg_notify('catalogue_changed', 'test barrier')`);
  await catalogueMetricsUntil(app, (m) => m.other > other, 'the barrier notification was not heard');
}

export const everyDay = (open = '06:00', close = '22:00'): OpeningHours =>
  Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ open, close }]])) as OpeningHours;

export async function createProvider(
  app: TestApp,
  opts: {
    name?: string;
    category?: ProviderCategory;
    tier?: string;
    lat?: number;
    lon?: number;
    timezone?: string;
    city?: string;
    country?: string;
    openingHours?: OpeningHours;
    roomCapacity?: number;
    freeCancellationHours?: number;
    lateCancellationRefundPercent?: number;
  } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const provider = em.create(ProviderSchema, {
    id: newId('provider', at.getTime()),
    name: opts.name ?? 'Test Provider',
    category: opts.category ?? 'GYM',
    tier: opts.tier ?? 'SILVER',
    description: 'A provider for tests',
    address: '1 Test Street',
    city: opts.city ?? 'Berlin',
    country: opts.country ?? 'DE',
    lat: opts.lat ?? 52.52,
    lon: opts.lon ?? 13.405,
    timezone: opts.timezone ?? 'Europe/Berlin',
    freeCancellationHours: opts.freeCancellationHours ?? 24,
    lateCancellationRefundPercent: opts.lateCancellationRefundPercent ?? 50,
    openingHours: opts.openingHours ?? everyDay(),
    roomCapacity: opts.roomCapacity ?? 2,
    createdAt: at,
  });
  await em.flush();
  return provider;
}

export async function createCopayOption(
  app: TestApp,
  providerId: string,
  opts: {
    name?: string;
    currency?: string;
    tiers?: string[];
    maxVisits?: number;
    visitDurationDays?: number;
    amount?: number;
    credits?: number;
  } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const option = em.create(CopayOptionSchema, {
    id: newId('copayOption', at.getTime()),
    providerId,
    name: opts.name ?? '10 visits',
    currency: opts.currency ?? 'EUR',
    tiers: opts.tiers ?? ['GOLD'],
    maxVisits: opts.maxVisits ?? 10,
    visitDurationDays: opts.visitDurationDays ?? 30,
    clientCopayAmount: opts.amount ?? 2500,
    clientCopayCredits: opts.credits ?? 25,
    createdAt: at,
  });
  await em.flush();
  return option;
}

export async function createSpaService(
  app: TestApp,
  providerId: string,
  opts: {
    name?: string;
    durationMinutes?: number;
    credits?: number;
    copayAmount?: number | null;
    currency?: string;
  } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const service = em.create(SpaServiceSchema, {
    id: newId('service', at.getTime()),
    providerId,
    name: opts.name ?? 'Massage',
    durationMinutes: opts.durationMinutes ?? 60,
    credits: opts.credits ?? 30,
    copayAmount: opts.copayAmount === undefined ? 4500 : opts.copayAmount,
    currency: opts.currency ?? 'EUR',
    createdAt: at,
  });
  await em.flush();
  return service;
}

export async function createClassCategory(app: TestApp, opts: { name?: string; description?: string; active?: boolean } = {}) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const category = em.create(ClassCategorySchema, {
    id: newId('classCategory', at.getTime()),
    name: opts.name ?? `Yoga ${Math.random().toString(36).slice(2, 8)}`,
    description: opts.description ?? 'Stretch and breathe',
    active: opts.active ?? true,
    createdAt: at,
  });
  await em.flush();
  return category;
}

export async function createClass(
  app: TestApp,
  providerId: string,
  categoryId: string,
  opts: { name?: string; durationMinutes?: number } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const cls = em.create(ClassSchema, {
    id: newId('class', at.getTime()),
    providerId,
    categoryId,
    name: opts.name ?? 'Morning Flow',
    description: 'A class for tests',
    durationMinutes: opts.durationMinutes ?? 60,
    createdAt: at,
  });
  await em.flush();
  return cls;
}

/** An instance starting at `startsAt` (an instant); its local date is derived in the provider's zone. */
export async function createClassInstance(
  app: TestApp,
  classId: string,
  startsAt: Date,
  opts: { timezone?: string; capacity?: number; spotsTaken?: number; status?: 'SCHEDULED' | 'CANCELLED' } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const instance = em.create(ClassInstanceSchema, {
    id: newId('classInstance', at.getTime()),
    classId,
    startsAt,
    localDate: localDateOf(startsAt, opts.timezone ?? 'Europe/Berlin'),
    capacity: opts.capacity ?? 20,
    spotsTaken: opts.spotsTaken ?? 0,
    status: opts.status ?? 'SCHEDULED',
    createdAt: at,
  });
  await em.flush();
  return instance;
}
