import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClass, createClassCategory, createClassInstance, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// The `date` filter is a calendar day at each class's provider, not in UTC. Providers in three
// zones: New York changes to daylight time on 2027-03-14 (02:00 → 03:00) and back on 2027-11-07
// (01:00–02:00 happens twice); Berlin keeps CET (UTC+1) in mid-March; Tokyo is UTC+9 all year.
// Each class has one instance; the instants are written out in UTC so the test does not lean on
// the time-zone code it checks.

const app = useApp({}, { now: new Date('2027-03-01T12:00:00Z') });
let reseller: TestReseller;
let categoryName: string;
const cls = new Map<string, string>();

interface Case {
  label: string;
  zone: string;
  startsAt: string;
  date: string;
  time: string;
}
const cases: Case[] = [
  {
    label: 'ny 23:30 the evening before spring-forward',
    zone: 'America/New_York',
    startsAt: '2027-03-14T04:30:00Z',
    date: '2027-03-13',
    time: '23:30',
  },
  {
    label: 'ny 00:30 on the change day (EST)',
    zone: 'America/New_York',
    startsAt: '2027-03-14T05:30:00Z',
    date: '2027-03-14',
    time: '00:30',
  },
  {
    label: 'ny 03:30 right after the gap (EDT)',
    zone: 'America/New_York',
    startsAt: '2027-03-14T07:30:00Z',
    date: '2027-03-14',
    time: '03:30',
  },
  {
    label: 'ny 23:30 on the change day (EDT)',
    zone: 'America/New_York',
    startsAt: '2027-03-15T03:30:00Z',
    date: '2027-03-14',
    time: '23:30',
  },
  { label: 'ny 00:30 the day after', zone: 'America/New_York', startsAt: '2027-03-15T04:30:00Z', date: '2027-03-15', time: '00:30' },
  { label: 'berlin 00:30', zone: 'Europe/Berlin', startsAt: '2027-03-13T23:30:00Z', date: '2027-03-14', time: '00:30' },
  { label: 'berlin 23:30', zone: 'Europe/Berlin', startsAt: '2027-03-14T22:30:00Z', date: '2027-03-14', time: '23:30' },
  { label: 'tokyo 23:30 the day before', zone: 'Asia/Tokyo', startsAt: '2027-03-13T14:30:00Z', date: '2027-03-13', time: '23:30' },
  { label: 'tokyo 08:00', zone: 'Asia/Tokyo', startsAt: '2027-03-13T23:00:00Z', date: '2027-03-14', time: '08:00' },
  { label: 'tokyo 00:30 the day after', zone: 'Asia/Tokyo', startsAt: '2027-03-14T15:30:00Z', date: '2027-03-15', time: '00:30' },
  {
    label: 'ny 23:30 the evening before fall-back (EDT)',
    zone: 'America/New_York',
    startsAt: '2027-11-07T03:30:00Z',
    date: '2027-11-06',
    time: '23:30',
  },
  {
    label: 'ny first 01:30 of fall-back (EDT)',
    zone: 'America/New_York',
    startsAt: '2027-11-07T05:30:00Z',
    date: '2027-11-07',
    time: '01:30',
  },
  {
    label: 'ny second 01:30 of fall-back (EST)',
    zone: 'America/New_York',
    startsAt: '2027-11-07T06:30:00Z',
    date: '2027-11-07',
    time: '01:30',
  },
  {
    label: 'ny 23:30 on the fall-back day (EST)',
    zone: 'America/New_York',
    startsAt: '2027-11-08T04:30:00Z',
    date: '2027-11-07',
    time: '23:30',
  },
  { label: 'berlin 00:30 in November', zone: 'Europe/Berlin', startsAt: '2027-11-06T23:30:00Z', date: '2027-11-07', time: '00:30' },
  { label: 'tokyo 00:30 in November', zone: 'Asia/Tokyo', startsAt: '2027-11-07T15:30:00Z', date: '2027-11-08', time: '00:30' },
];

beforeAll(async () => {
  reseller = await createReseller(app);
  const category = await createClassCategory(app);
  categoryName = category.name;
  const providers = new Map<string, string>();
  for (const zone of ['America/New_York', 'Europe/Berlin', 'Asia/Tokyo']) {
    providers.set(zone, (await createProvider(app, { timezone: zone, name: zone })).id);
  }
  for (const c of cases) {
    const made = await createClass(app, providers.get(c.zone)!, category.id, { name: c.label });
    await createClassInstance(app, made.id, new Date(c.startsAt), { timezone: c.zone });
    cls.set(c.label, made.id);
  }
});

const expectedOn = (date: string) =>
  cases
    .filter((c) => c.date === date)
    .map((c) => cls.get(c.label)!)
    .sort()
    .reverse();

describe('date filter across three zones and both DST changes', () => {
  for (const date of ['2027-03-13', '2027-03-14', '2027-03-15', '2027-11-06', '2027-11-07', '2027-11-08']) {
    it(`date=${date} › exactly the classes held that day on their provider's calendar`, async () => {
      const res = await v3(app, `/classes?category=${encodeURIComponent(categoryName)}&date=${date}&limit=100`, { key: reseller.key });
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(expectedOn(date));
    });
  }

  it('GraphQL classes(date:) answers the same classes', async () => {
    const res = await gql(
      app,
      reseller.key,
      `query($c: String, $d: Date) { classes(category: $c, date: $d, first: 100) { edges { node { id } } } }`,
      { c: categoryName, d: '2027-03-14' },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.classes.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(expectedOn('2027-03-14'));
  });
});

describe('instance date and time are local to the provider', () => {
  it.each(cases)('$label › date $date, time $time', async (c) => {
    const res = await v3(app, `/classes/${cls.get(c.label)}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body.instances).toEqual([
      expect.objectContaining({
        starts_at: Date.parse(c.startsAt) / 1000,
        date: c.date,
        time: c.time,
      }),
    ]);
  });

  it('GraphQL ClassInstance date and time are the same', async () => {
    const ids = cases.map((c) => cls.get(c.label)!);
    const res = await gql(
      app,
      reseller.key,
      `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Class { instances { edges { node { startsAt date time } } } } } }`,
      { ids },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.nodes.map((n: { instances: { edges: { node: unknown }[] } }) => n.instances.edges.map((e) => e.node))).toEqual(
      cases.map((c) => [{ startsAt: c.startsAt, date: c.date, time: c.time }]),
    );
  });
});
