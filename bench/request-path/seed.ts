import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../src/platform/ids.ts';
import { createApiKey, createReseller, fundReseller } from '../../src/modules/resellers/index.ts';
import { PassPackageSchema, type PassCategory } from '../../src/modules/passes/passes.entity.ts';
import { buildDemoCatalog } from '../../src/db/demo-catalog.ts';
import { importCatalog } from '../../src/modules/catalog/catalog.import.ts';

// What an operator would set up, through the services the CLI uses: one funded reseller with an
// API key, 20 pass packages (half PAYG, half PREPAID with spa credits) and the demo catalogue's
// 216 providers, so the provider count of GET /passes has rows to count. Issued passes are made
// over HTTP by the statement-count step, as a reseller would.

export interface BenchSeed {
  resellerId: string;
  apiKey: string;
  paygPassId: string;
  prepaidPassId: string;
}

const categories: PassCategory[] = [
  { type: 'GYM', tiers: ['BRONZE', 'SILVER', 'GOLD'], visits_allowed: 8, credit_allocated: 0 },
  { type: 'SPA', tiers: ['SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 50 },
];

export async function seedBench(em: EntityManager, at: Date): Promise<BenchSeed> {
  const reseller = await createReseller(em, { name: 'Bench Reseller', currency: 'EUR' }, at);
  await em.transactional((tx) => fundReseller(tx, reseller.id, 1_000_000_000, at, 'Bench funding'));
  const key = await createApiKey(em, reseller.id, at, 'bench');
  const passes = Array.from({ length: 20 }, (_, i) =>
    em.create(PassPackageSchema, {
      id: newId('pass', at.getTime() + i),
      resellerId: reseller.id,
      name: `Bench Pass ${i + 1}`,
      description: 'A pass package for the request-path benchmark',
      price: 1000 + i * 100,
      currency: reseller.currency,
      duration: 'MONTHLY',
      paymentModel: i % 2 === 0 ? 'PAYG' : 'PREPAID',
      categories,
      createdAt: at,
    }),
  );
  await em.flush();
  await importCatalog(em, buildDemoCatalog(at).catalog, { at });
  return {
    resellerId: reseller.id,
    apiKey: key.secret,
    paygPassId: passes.find((p) => p.paymentModel === 'PAYG')!.id,
    prepaidPassId: passes.find((p) => p.paymentModel === 'PREPAID')!.id,
  };
}
