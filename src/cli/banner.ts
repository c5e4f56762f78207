import type { DemoSeed } from '../db/seed.ts';

// What a person starting the service reads. `serve` writes it to stderr, so stdout carries only
// the log stream (JSON when it is not a terminal).

export function describeSeed(seed: DemoSeed, base: string): string {
  const lines = ['Demo data created. API keys are shown once — store them now:'];
  for (const r of seed.resellers) {
    lines.push(`  ${r.name} (${r.id}), balance ${r.balance} ${r.currency} minor units`, `    API key: ${r.api_key}`);
    for (const p of r.passes) lines.push(`    pass ${p.id}  ${p.name} (${p.payment_model})`);
  }
  const c = seed.catalog;
  if (c) {
    lines.push(
      `Catalogue: ${c.providers} providers (${c.gyms} gyms, ${c.spas} spas) in ${c.cities.map((city) => `${city.name} (${city.timezone})`).join(', ')};`,
      `  ${c.spa_services} spa services, ${c.copay_options} gym co-pay options, ${c.class_categories} class categories, ${c.classes} classes with ${c.class_instances} instances over the next 14 days`,
    );
    const [city] = c.cities;
    // The key is not repeated here: it is printed once, above.
    lines.push(`What is near me in ${city.name} (API_KEY = one of the keys above):`, `  curl -H "Authorization: Bearer $API_KEY" '${base}/v3/api/business/reseller/providers?lat=${city.lat}&lon=${city.lon}&radius_km=3'`);
  }
  return lines.join('\n');
}

export function describeEndpoints(base: string): string {
  return `GraphQL and GraphiQL: ${base}/graphql\nREST V3: ${base}/v3/api/business/reseller (OpenAPI at /v3/api/business/reseller/openapi.json)`;
}
