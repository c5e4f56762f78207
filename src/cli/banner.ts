import type { DemoBookings, DemoClass, DemoSeed, DemoSpaSlot } from '../db/seed.ts';

// What a person starting the service reads. `serve` writes it to stderr, so stdout carries only
// the log stream (JSON when it is not a terminal).

export function describeSeed(seed: DemoSeed, base: string): string {
  const lines = ['Demo data created. API keys are shown once — store them now:'];
  for (const r of seed.resellers) {
    lines.push(`  ${r.name} (${r.id}), balance ${r.balance} ${r.currency} minor units`, `    API key: ${r.api_key}`);
    for (const p of r.passes) lines.push(`    pass ${p.id}  ${p.name} (${p.payment_model})`);
    for (const c of r.clients) {
      const visits =
        c.gym_visits_left === null ? '' : `, ${c.gym_visits_left} gym visit${c.gym_visits_left === 1 ? '' : 's'} left this month`;
      lines.push(`    client ${c.id}  ${c.name} (${c.pass_name}${visits})`);
    }
  }
  const c = seed.catalog;
  if (c) {
    lines.push(
      `Catalogue: ${c.providers} providers (${c.gyms} gyms, ${c.spas} spas) in ${c.cities.map((city) => `${city.name} (${city.timezone})`).join(', ')};`,
      `  ${c.spa_services} spa services, ${c.copay_options} gym co-pay options, ${c.class_categories} class categories, ${c.classes} classes with ${c.class_instances} instances over the next 14 days`,
    );
    const [city] = c.cities;
    // The key is not repeated here: it is printed once, above.
    lines.push(
      `What is near me in ${city.name} (API_KEY = one of the keys above):`,
      `  curl -H "Authorization: Bearer $API_KEY" '${base}/v3/api/business/reseller/providers?lat=${city.lat}&lon=${city.lon}&radius_km=3'`,
    );
  }
  const [first] = seed.resellers;
  if (first?.bookings.class || first?.bookings.spa) lines.push(...describeBookings(first.name, first.clients, first.bookings, base));
  return lines.join('\n');
}

/** Curl lines booking a class and a spa slot for the reseller's first demo client, and the other paths' targets. */
function describeBookings(reseller: string, clients: DemoSeed['resellers'][number]['clients'], b: DemoBookings, base: string): string[] {
  const name = (id: string) => clients.find((c) => c.id === id)?.name ?? id;
  const visitsLeft = clients.find((c) => c.id === b.visits_client_id)?.gym_visits_left;
  const post = (path: string, body: Record<string, unknown>) =>
    `  curl -s '${base}/v3/api/business/reseller${path}' -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' -d '${json(body)}'`;
  const lines = [
    `Book for ${name(b.client_id)} (${b.client_id}) of ${reseller}, with its key as API_KEY (README "First hour" goes on from here):`,
  ];
  if (b.class)
    lines.push(
      `  a class: ${describeClass(b.class)}`,
      post('/bookings/class', { class_instance_id: b.class.class_instance_id, client_id: b.client_id }),
    );
  if (b.spa) lines.push(`  a spa slot: ${describeSlot(b.spa)}`, post('/bookings/spa', spaBody(b.spa, b.client_id)));
  const others = [
    b.copay_class && `copay_required: class_instance_id ${b.copay_class.class_instance_id} (${describeClass(b.copay_class)})`,
    b.last_spot_class &&
      `class_full: class_instance_id ${b.last_spot_class.class_instance_id} (1 spot left: ${describeClass(b.last_spot_class)}), the second booking`,
    visitsLeft === 1 &&
      `additional_visits_required: client_id ${b.visits_client_id} (${name(b.visits_client_id)}, 1 gym visit left this month), the second class`,
    b.copay_spa && `a spa co-pay session: ${json(spaBody(b.copay_spa))} (${describeSlot(b.copay_spa)})`,
  ].filter((l): l is string => typeof l === 'string');
  lines.push('  the other paths, with the same requests:', ...others.map((l) => `    ${l}`));
  return lines;
}

const describeClass = (c: DemoClass) => `${c.class_name} at ${c.provider_name} (${c.tier} gym), ${c.date} ${c.time} ${c.timezone}`;
const describeSlot = (s: DemoSpaSlot) =>
  `${s.service_names.join(', ')} at ${s.spa_name} (${s.tier} spa), ${s.date} ${s.time} ${s.timezone}`;
const spaBody = (s: DemoSpaSlot, clientId?: string) => ({
  spa_id: s.spa_id,
  service_ids: s.service_ids,
  date: s.date,
  time: s.time,
  ...(clientId ? { client_id: clientId } : {}),
});
/** JSON with a space after each colon and comma, as a person types it. */
const json = (o: Record<string, unknown>) =>
  `{${Object.entries(o)
    .map(([k, v]) => `"${k}": ${Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(', ')}]` : JSON.stringify(v)}`)
    .join(', ')}}`;

export function describeEndpoints(base: string): string {
  return `GraphQL and GraphiQL: ${base}/graphql\nREST V3: ${base}/v3/api/business/reseller (OpenAPI at /v3/api/business/reseller/openapi.json)`;
}
