import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createProvider, createSpaService, everyDay } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { expectError, expectValidationError } from '../support/assertions.ts';

const app = useApp({}, { now: new Date('2026-01-01T00:00:00Z') });
let reseller: TestReseller;
let spaId: string;
let gymId: string;
let massage: string;
let sauna: string;
let otherSpaService: string;

const UNKNOWN_SPA = 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ';
const UNKNOWN_SERVICE = 'svc_01JZZZZZZZZZZZZZZZZZZZZZZZ';

beforeAll(async () => {
  reseller = await createReseller(app);
  spaId = (await createProvider(app, { category: 'SPA', openingHours: everyDay('09:00', '11:00') })).id;
  massage = (await createSpaService(app, spaId, { name: 'Massage', durationMinutes: 60 })).id;
  sauna = (await createSpaService(app, spaId, { name: 'Sauna', durationMinutes: 15 })).id;
  const otherSpa = await createProvider(app, { category: 'SPA' });
  otherSpaService = (await createSpaService(app, otherSpa.id)).id;
  gymId = (await createProvider(app, { category: 'GYM' })).id;
  await createSpaService(app, gymId);
});

const get = (query: string, id = spaId) => v3(app, `/spas/${id}/availability${query}`, { key: reseller.key });

describe('GET /spas/{spa_id}/availability › service_ids forms', () => {
  it('comma-separated, repeated and mixed › the same services, in the order named', async () => {
    const comma = await get(`?date=2026-06-15&service_ids=${sauna},${massage}`);
    const repeated = await get(`?date=2026-06-15&service_ids=${sauna}&service_ids=${massage}`);
    const single = await get(`?service_ids=${massage}&date=2026-06-15`);
    expect(comma.status, comma.text).toBe(200);
    expect(comma.body.service_ids).toEqual([sauna, massage]);
    expect(comma.body.duration_minutes).toBe(75);
    expect(repeated.body).toEqual(comma.body);
    expect(single.body.duration_minutes).toBe(60);
  });

  it('a comma encoded as %2C is the same separator', async () => {
    const res = await get(`?date=2026-06-15&service_ids=${sauna}%2C${massage}`);
    expect(res.body.service_ids).toEqual([sauna, massage]);
  });
});

describe('GET /spas/{spa_id}/availability › 400 validation_error', () => {
  const eleven = () => Array.from({ length: 11 }, (_, i) => `svc_01JZZZZZZZZZZZZZZZZZZZZZ${'ABCDEFGHJKM'[i]}`).join(',');
  const cases: [string, () => string, string][] = [
    ['date missing', () => `?service_ids=${massage}`, 'date'],
    ['date empty', () => `?date=&service_ids=${massage}`, 'date'],
    ['date not YYYY-MM-DD', () => `?date=2026-6-15&service_ids=${massage}`, 'date'],
    ['date with a time', () => `?date=2026-06-15T10:00&service_ids=${massage}`, 'date'],
    ['date not a calendar date', () => `?date=2026-02-30&service_ids=${massage}`, 'date'],
    ['date before 1970', () => `?date=0050-01-05&service_ids=${massage}`, 'date'],
    ['date after 2999', () => `?date=9999-12-31&service_ids=${massage}`, 'date'],
    ['date sent twice', () => `?date=2026-06-15&date=2026-06-16&service_ids=${massage}`, 'date'],
    ['service_ids missing', () => '?date=2026-06-15', 'service_ids'],
    ['service_ids empty', () => '?date=2026-06-15&service_ids=', 'service_ids'],
    ['service_ids with an empty piece', () => `?date=2026-06-15&service_ids=${massage},,${sauna}`, 'service_ids'],
    ['service_ids with a trailing comma', () => `?date=2026-06-15&service_ids=${massage},`, 'service_ids'],
    ['service_ids malformed', () => '?date=2026-06-15&service_ids=massage', 'service_ids'],
    ['service_ids naming a provider id', () => `?date=2026-06-15&service_ids=${spaId}`, 'service_ids'],
    ['service_ids unknown', () => `?date=2026-06-15&service_ids=${UNKNOWN_SERVICE}`, 'service_ids'],
    ['service_ids of another spa', () => `?date=2026-06-15&service_ids=${massage},${otherSpaService}`, 'service_ids'],
    ['service_ids duplicated in one value', () => `?date=2026-06-15&service_ids=${massage},${massage}`, 'service_ids'],
    [
      'service_ids duplicated across repeats',
      () => `?date=2026-06-15&service_ids=${massage}&service_ids=${sauna},${massage}`,
      'service_ids',
    ],
    ['more than 10 service_ids', () => `?date=2026-06-15&service_ids=${eleven()}`, 'service_ids'],
    ['an unknown parameter', () => `?date=2026-06-15&service_ids=${massage}&limit=5`, 'limit'],
    ['a misspelt parameter', () => `?date=2026-06-15&service_id=${massage}`, 'service_id'],
  ];
  for (const [name, query, param] of cases) {
    it(`${name} › 400 on ${param}`, async () => {
      expectValidationError(await get(query()), param);
    });
  }
});

describe('GET /spas/{spa_id}/availability › 404 and 401', () => {
  it.each([
    ['an unknown spa id', UNKNOWN_SPA],
    ['a malformed spa id', 'spa-1'],
    ['a gym', ''],
  ])('%s › 404 resource_not_found', async (_, id) => {
    expectError(await get(`?date=2026-06-15&service_ids=${massage}`, id || gymId), 404, 'resource_not_found');
  });

  it('without an API key › 401', async () => {
    expectError(await v3(app, `/spas/${spaId}/availability?date=2026-06-15&service_ids=${massage}`), 401, 'invalid_api_key');
  });
});

const AVAILABILITY = `query($spaId: ID!, $date: Date!, $serviceIds: [ID!]!) {
  spaAvailability(spaId: $spaId, date: $date, serviceIds: $serviceIds) { durationMinutes slots { time available } }
}`;

describe('GraphQL spaAvailability › errors', () => {
  const run = (variables: Record<string, unknown>) =>
    gql(app, reseller.key, AVAILABILITY, { spaId, date: '2026-06-15', serviceIds: [massage], ...variables });

  it('valid input answers slots', async () => {
    const res = await run({ serviceIds: [massage, sauna] });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.spaAvailability.durationMinutes).toBe(75);
    expect(res.body.data.spaAvailability.slots.map((s: { time: string }) => s.time)).toEqual(['09:00', '09:15', '09:30', '09:45']);
  });

  const cases: [string, () => Record<string, unknown>, string, string][] = [
    ['no service', () => ({ serviceIds: [] }), 'validation_error', 'serviceIds'],
    ['a malformed service id', () => ({ serviceIds: ['massage'] }), 'validation_error', 'serviceIds'],
    ['an unknown service', () => ({ serviceIds: [UNKNOWN_SERVICE] }), 'validation_error', 'serviceIds'],
    ["another spa's service", () => ({ serviceIds: [otherSpaService] }), 'validation_error', 'serviceIds'],
    ['a service named twice', () => ({ serviceIds: [massage, sauna, massage] }), 'validation_error', 'serviceIds'],
    ['a date before 1970', () => ({ date: '1969-12-31' }), 'validation_error', 'date'],
    ['an unknown spa', () => ({ spaId: UNKNOWN_SPA }), 'resource_not_found', 'spaId'],
    ['a gym', () => ({ spaId: gymId }), 'resource_not_found', 'spaId'],
  ];
  for (const [name, variables, code, param] of cases) {
    it(`${name} › top-level error ${code} on ${param}`, async () => {
      const res = await run(variables());
      expect(res.body.data ?? null).toBeNull();
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors![0].extensions).toMatchObject({ code, param });
    });
  }

  it('a date that is not a calendar date is refused by the Date scalar before anything runs', async () => {
    const res = await run({ date: '2026-02-30' });
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0].message).toMatch(/Date must be YYYY-MM-DD/);
  });

  it('without an API key › refused', async () => {
    const res = await gql(app, undefined, AVAILABILITY, { spaId, date: '2026-06-15', serviceIds: [massage] });
    expect(res.body.data?.spaAvailability ?? null).toBeNull();
    expect(res.body.errors?.length).toBeGreaterThan(0);
  });
});
