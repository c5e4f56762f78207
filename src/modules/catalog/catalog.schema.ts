import { z } from 'zod';
import { idPrefixes, isId, type IdKind } from '../../platform/ids.ts';
import { isTimeZone, minutesOf, weekdays } from '../../platform/time.ts';
import { localDate, noNul, shortText } from '../../platform/validation.ts';
import { providerCategories } from '../providers/index.ts';
import { classInstanceStatuses } from '../classes/index.ts';
import { durations, paymentModels } from '../passes/index.ts';

// The catalogue file (docs/catalog-format.md): one JSON document of record arrays. Records are
// strict (an unknown field is a typo, reported rather than dropped) and carry their own prefixed ids.

const id = (kind: IdKind) =>
  z
    .string({ error: `Expected a ${idPrefixes[kind]}_ id` })
    .refine((v) => isId(kind, v), `Expected a ${kind} id: '${idPrefixes[kind]}_' followed by a 26-character ULID`);

const text = (max: number) => z.string().max(max).refine(noNul, 'Must not contain NUL characters');
const count = (min: number, max: number) => z.int().min(min).max(max);
const amount = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const currency = z.string().regex(/^[A-Z]{3}$/, 'Expected an ISO-4217 currency code, e.g. EUR');
// Tier labels are identifiers compared exactly with pass categories' tiers: keep them canonical.
const tier = z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'Expected an upper-case tier label, e.g. GOLD');
const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Expected a local time as HH:MM (00:00–23:59)');

const interval = z
  .strictObject({ open: localTime, close: localTime })
  .refine((i) => minutesOf(i.open) < minutesOf(i.close), { message: 'close must be after open', path: ['close'] });

const openingHours = z
  .strictObject(
    Object.fromEntries(weekdays.map((d) => [d, z.array(interval).max(8).optional()])) as Record<
      (typeof weekdays)[number],
      z.ZodOptional<z.ZodArray<typeof interval>>
    >,
  )
  .superRefine((hours, ctx) => {
    for (const day of weekdays) {
      const sorted = [...(hours[day] ?? [])].sort((a, b) => minutesOf(a.open) - minutesOf(b.open));
      for (let i = 1; i < sorted.length; i++) {
        if (minutesOf(sorted[i].open) < minutesOf(sorted[i - 1].close)) {
          ctx.addIssue({
            code: 'custom',
            path: [day],
            message: `intervals overlap (${sorted[i - 1].open}–${sorted[i - 1].close} and ${sorted[i].open}–${sorted[i].close})`,
          });
        }
      }
    }
  });

export const providerRecord = z.strictObject({
  id: id('provider'),
  name: shortText(200),
  category: z.enum(providerCategories),
  tier,
  description: text(2000).default(''),
  address: shortText(300),
  city: shortText(100),
  country: z.string().regex(/^[A-Z]{2}$/, 'Expected an ISO-3166 alpha-2 country code, e.g. DE'),
  lat: z.number().min(-90).max(90),
  lon: z.number().min(-180).max(180),
  timezone: z.string().refine(isTimeZone, 'Expected an IANA time zone, e.g. Europe/Berlin'),
  opening_hours: openingHours,
  room_capacity: count(1, 1000).default(1),
  cancellation_policy: z
    .strictObject({
      free_cancellation_hours: count(0, 720),
      late_cancellation_refund_percent: count(0, 100),
    })
    .default({ free_cancellation_hours: 24, late_cancellation_refund_percent: 0 }),
});

export const copayOptionRecord = z.strictObject({
  id: id('copayOption'),
  provider_id: id('provider'),
  name: shortText(200),
  currency,
  tiers: z.array(tier).min(1).max(20),
  max_visits: count(1, 10_000),
  visit_duration_days: count(1, 3660),
  client_copay_amount: amount,
  client_copay_credits: amount,
});

export const spaServiceRecord = z.strictObject({
  id: id('service'),
  provider_id: id('provider'),
  name: shortText(200),
  duration_minutes: count(15, 480).refine((m) => m % 15 === 0, 'Must be a multiple of 15 (slots are 15 minutes)'),
  credits: amount,
  copay_amount: amount.nullable().default(null),
  currency,
});

export const classCategoryRecord = z.strictObject({
  id: id('classCategory'),
  name: shortText(100),
  description: text(2000).default(''),
  active: z.boolean().default(true),
});

export const classRecord = z.strictObject({
  id: id('class'),
  provider_id: id('provider'),
  category_id: id('classCategory'),
  name: shortText(200),
  description: text(2000).default(''),
  duration_minutes: count(5, 480),
});

export const classInstanceRecord = z.strictObject({
  id: id('classInstance'),
  class_id: id('class'),
  // Wall-clock start in the class's provider zone; the instant is derived (DST-aware) on import.
  date: localDate,
  time: localTime,
  capacity: count(1, 10_000),
  status: z.enum(classInstanceStatuses).default('SCHEDULED'),
});

export const passPackageRecord = z.strictObject({
  id: id('pass'),
  reseller_id: id('reseller'),
  name: shortText(200),
  description: text(2000).default(''),
  price: amount,
  currency,
  duration: z.enum(durations),
  payment_model: z.enum(paymentModels),
  categories: z
    .array(
      z.strictObject({
        type: z.enum(providerCategories),
        tiers: z.array(tier).min(1).max(20),
        visits_allowed: count(1, 10_000).nullable(),
        credit_allocated: amount,
      }),
    )
    .min(1)
    .max(2)
    .refine((cs) => new Set(cs.map((c) => c.type)).size === cs.length, 'Each category type (GYM, SPA) at most once'),
});

/** Record kinds in the order they are written (references point backwards only). */
export const catalogSections = {
  providers: providerRecord,
  copay_options: copayOptionRecord,
  spa_services: spaServiceRecord,
  class_categories: classCategoryRecord,
  classes: classRecord,
  class_instances: classInstanceRecord,
  pass_packages: passPackageRecord,
} as const;

export type CatalogSection = keyof typeof catalogSections;
export const sectionNames = Object.keys(catalogSections) as CatalogSection[];

export type ProviderRecord = z.infer<typeof providerRecord>;
export type CopayOptionRecord = z.infer<typeof copayOptionRecord>;
export type SpaServiceRecord = z.infer<typeof spaServiceRecord>;
export type ClassCategoryRecord = z.infer<typeof classCategoryRecord>;
export type ClassRecord = z.infer<typeof classRecord>;
export type ClassInstanceRecord = z.infer<typeof classInstanceRecord>;
export type PassPackageRecord = z.infer<typeof passPackageRecord>;

/** A validated catalogue: every section present (possibly empty). */
export interface Catalog {
  providers: ProviderRecord[];
  copay_options: CopayOptionRecord[];
  spa_services: SpaServiceRecord[];
  class_categories: ClassCategoryRecord[];
  classes: ClassRecord[];
  class_instances: ClassInstanceRecord[];
  pass_packages: PassPackageRecord[];
}

/** What a caller may hand in: defaults may be left out (z.input of each record). */
export type CatalogInput = { [K in CatalogSection]?: z.input<(typeof catalogSections)[K]>[] } & { format?: 1 };
