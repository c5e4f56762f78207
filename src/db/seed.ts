import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../platform/ids.ts';
import { ResellerSchema } from '../modules/resellers/resellers.entity.ts';
import { createApiKey, createReseller, fundReseller } from '../modules/resellers/resellers.service.ts';
import { PassPackageSchema, type Duration, type PassCategory, type PaymentModel } from '../modules/passes/passes.entity.ts';

export interface DemoSeed {
  resellers: { id: string; name: string; currency: string; balance: number; api_key: string; passes: { id: string; name: string; payment_model: PaymentModel }[] }[];
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
    const seeded: DemoSeed = { resellers: [] };
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
    return seeded;
  });
}
