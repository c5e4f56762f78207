import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../platform/ids.ts';
import { ResellerSchema } from '../modules/resellers/resellers.entity.ts';
import { createApiKey, createReseller, fundReseller } from '../modules/resellers/resellers.service.ts';
import { PassPackageSchema, type Duration, type PassCategory, type PaymentModel } from '../modules/passes/passes.entity.ts';
import { ProviderSchema } from '../modules/providers/providers.entity.ts';
import { importCatalog } from '../modules/catalog/catalog.import.ts';
import { buildDemoCatalog, type DemoCity } from './demo-catalog.ts';

export interface DemoCatalogSummary {
  providers: number; gyms: number; spas: number; spa_services: number; copay_options: number;
  class_categories: number; classes: number; class_instances: number;
  cities: (DemoCity & { providers: number })[];
}

export interface DemoSeed {
  resellers: { id: string; name: string; currency: string; balance: number; api_key: string; passes: { id: string; name: string; payment_model: PaymentModel }[] }[];
  /** Null when the database already held a catalogue (imported): the demo adds none then. */
  catalog: DemoCatalogSummary | null;
}

interface PackageSpec { name: string; description: string; price: number; duration: Duration; paymentModel: PaymentModel; categories: PassCategory[] }

const packages: PackageSpec[] = [
  {
    name: 'Flex Monthly', description: 'Pay-as-you-go gym access with a monthly spa credit allowance.',
    price: 4900, duration: 'MONTHLY', paymentModel: 'PAYG',
    categories: [
      { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: 8, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 60 },
    ],
  },
  {
    name: 'Premium Quarterly', description: 'Prepaid unlimited gym access and spa credits, billed per quarter.',
    price: 29900, duration: 'QUARTERLY', paymentModel: 'PREPAID',
    categories: [
      { type: 'GYM', tiers: ['BRONZE', 'SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 200 },
    ],
  },
];

/** Demo data on an empty database; returns the API keys (shown once) or null when data exists. */
export async function seedDemo(em: EntityManager, at: Date): Promise<DemoSeed | null> {
  if ((await em.count(ResellerSchema, {})) > 0) return null;
  return em.transactional(async (tx) => {
    const seeded: DemoSeed = { resellers: [], catalog: null };
    for (const name of ['Northwind Wellness', 'Harbor Benefits']) {
      const reseller = await createReseller(tx, { name, currency: 'EUR' }, at);
      const balance = await fundReseller(tx, reseller.id, 1_000_000, at, 'Demo funding');
      const key = await createApiKey(tx, reseller.id, at, 'demo');
      const passes = packages.map((p) => tx.create(PassPackageSchema, {
        id: newId('pass', at.getTime()),
        resellerId: reseller.id,
        name: p.name, description: p.description, price: p.price, currency: reseller.currency,
        duration: p.duration, paymentModel: p.paymentModel, categories: p.categories, createdAt: at,
      }));
      await tx.flush();
      seeded.resellers.push({
        id: reseller.id, name, currency: reseller.currency, balance, api_key: key.secret,
        passes: passes.map((p) => ({ id: p.id, name: p.name, payment_model: p.paymentModel })),
      });
    }
    if ((await tx.count(ProviderSchema, {})) === 0) seeded.catalog = await seedDemoCatalog(tx, at);
    return seeded;
  });
}

/** The demo catalogue through the import path: validated like any file, written in bulk. */
async function seedDemoCatalog(em: EntityManager, at: Date): Promise<DemoCatalogSummary> {
  const stored = await em.execute<{ id: string; name: string }[]>('select id, name from class_category');
  const { catalog, cities, heldSpots } = buildDemoCatalog(at, new Map(stored.map((c) => [c.name, c.id])));
  await importCatalog(em, catalog, { at });
  // Some instances nearly or completely full, as if the provider's own members held the spots,
  // so "few spots left" and class_full are reachable in the demo.
  await em.execute(
    `update class_instance i set spots_taken = r.taken
       from jsonb_to_recordset(?::jsonb) as r(id text, taken int) where i.id = r.id`,
    [JSON.stringify([...heldSpots].map(([id, taken]) => ({ id, taken })))],
  );
  const gyms = catalog.providers.filter((p) => p.category === 'GYM').length;
  return {
    providers: catalog.providers.length, gyms, spas: catalog.providers.length - gyms,
    spa_services: catalog.spa_services.length, copay_options: catalog.copay_options.length,
    class_categories: catalog.class_categories.length + stored.length, classes: catalog.classes.length,
    class_instances: catalog.class_instances.length, cities,
  };
}
