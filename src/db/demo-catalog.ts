import { newId } from '../platform/ids.ts';
import { addDays, localDateOf, minutesOf, weekdayOf, weekdays, zonedInstant, type Weekday } from '../platform/time.ts';
import type { OpeningHours } from '../modules/providers/providers.entity.ts';
import type { Catalog, ClassRecord, CopayOptionRecord, ProviderRecord, SpaServiceRecord } from '../modules/catalog/index.ts';

// The demo catalogue: three cities in three zones (Berlin and New York observe DST, Tokyo does
// not), gyms and spas of every tier. Pseudo-random from a fixed seed, so every run builds the same
// catalogue (only ids and the seed day differ). The demo passes cover GYM BRONZE–GOLD and SPA
// SILVER–GOLD: BRONZE spas and PLATINUM providers are uncovered and carry co-pay prices. A few
// classes at the first city's BRONZE and SILVER gyms (covered by both demo passes) have one spot
// left, so the class_full path of README "First hour" is there for every demo reseller.

export interface DemoCity {
  name: string;
  country: string;
  timezone: string;
  lat: number;
  lon: number;
}

interface Area {
  name: string;
  lat: number;
  lon: number;
  streets: string[];
  postcode: string;
}
interface CitySpec extends DemoCity {
  areas: Area[];
  address(rand: Rand, area: Area): string;
}

const cities: CitySpec[] = [
  {
    name: 'Berlin',
    country: 'DE',
    timezone: 'Europe/Berlin',
    lat: 52.52,
    lon: 13.405,
    areas: [
      { name: 'Mitte', lat: 52.5206, lon: 13.4094, streets: ['Torstraße', 'Friedrichstraße', 'Rosenthaler Straße'], postcode: '10119' },
      {
        name: 'Prenzlauer Berg',
        lat: 52.5388,
        lon: 13.4244,
        streets: ['Kastanienallee', 'Schönhauser Allee', 'Danziger Straße'],
        postcode: '10435',
      },
      {
        name: 'Kreuzberg',
        lat: 52.4986,
        lon: 13.4033,
        streets: ['Oranienstraße', 'Bergmannstraße', 'Skalitzer Straße'],
        postcode: '10999',
      },
      {
        name: 'Friedrichshain',
        lat: 52.5155,
        lon: 13.454,
        streets: ['Warschauer Straße', 'Boxhagener Straße', 'Frankfurter Allee'],
        postcode: '10245',
      },
      {
        name: 'Charlottenburg',
        lat: 52.5167,
        lon: 13.3041,
        streets: ['Kurfürstendamm', 'Kantstraße', 'Wilmersdorfer Straße'],
        postcode: '10627',
      },
      { name: 'Schöneberg', lat: 52.4833, lon: 13.35, streets: ['Hauptstraße', 'Goltzstraße', 'Akazienstraße'], postcode: '10827' },
      { name: 'Neukölln', lat: 52.4811, lon: 13.4353, streets: ['Karl-Marx-Straße', 'Sonnenallee', 'Weserstraße'], postcode: '12043' },
    ],
    address: (rand, area) => `${rand.pick(area.streets)} ${rand.int(1, 180)}, ${area.postcode} Berlin`,
  },
  {
    name: 'New York',
    country: 'US',
    timezone: 'America/New_York',
    lat: 40.7549,
    lon: -73.984,
    areas: [
      { name: 'Midtown', lat: 40.7549, lon: -73.984, streets: ['W 54th St', '8th Ave', 'Madison Ave'], postcode: '10019' },
      { name: 'Upper West Side', lat: 40.787, lon: -73.9754, streets: ['Amsterdam Ave', 'Columbus Ave', 'W 72nd St'], postcode: '10023' },
      { name: 'Upper East Side', lat: 40.7736, lon: -73.9566, streets: ['Lexington Ave', 'E 86th St', '2nd Ave'], postcode: '10028' },
      { name: 'Chelsea', lat: 40.7465, lon: -74.0014, streets: ['W 23rd St', '7th Ave', '9th Ave'], postcode: '10011' },
      { name: 'SoHo', lat: 40.7233, lon: -74.003, streets: ['Spring St', 'Broadway', 'Prince St'], postcode: '10012' },
      { name: 'Financial District', lat: 40.7075, lon: -74.0113, streets: ['Broad St', 'Water St', 'John St'], postcode: '10004' },
      { name: 'Williamsburg', lat: 40.7081, lon: -73.9571, streets: ['Bedford Ave', 'N 6th St', 'Grand St'], postcode: '11211' },
      {
        name: 'Harlem',
        lat: 40.8116,
        lon: -73.9465,
        streets: ['Malcolm X Blvd', 'W 125th St', 'Frederick Douglass Blvd'],
        postcode: '10027',
      },
    ],
    address: (rand, area) =>
      `${rand.int(10, 980)} ${rand.pick(area.streets)}, ${area.name === 'Williamsburg' ? 'Brooklyn' : 'New York'}, NY ${area.postcode}`,
  },
  {
    name: 'Tokyo',
    country: 'JP',
    timezone: 'Asia/Tokyo',
    lat: 35.658,
    lon: 139.7016,
    areas: [
      { name: 'Shibuya', lat: 35.658, lon: 139.7016, streets: ['Dogenzaka', 'Jingumae', 'Udagawacho'], postcode: 'Shibuya-ku' },
      { name: 'Shinjuku', lat: 35.6938, lon: 139.7034, streets: ['Nishi-Shinjuku', 'Kabukicho', 'Shinjuku'], postcode: 'Shinjuku-ku' },
      { name: 'Roppongi', lat: 35.6628, lon: 139.7314, streets: ['Roppongi', 'Akasaka', 'Azabudai'], postcode: 'Minato-ku' },
      { name: 'Ginza', lat: 35.6717, lon: 139.765, streets: ['Ginza', 'Tsukiji', 'Yurakucho'], postcode: 'Chuo-ku' },
      {
        name: 'Ikebukuro',
        lat: 35.7295,
        lon: 139.7109,
        streets: ['Higashi-Ikebukuro', 'Nishi-Ikebukuro', 'Minami-Ikebukuro'],
        postcode: 'Toshima-ku',
      },
      { name: 'Ebisu', lat: 35.6467, lon: 139.7101, streets: ['Ebisu-Minami', 'Ebisu-Nishi', 'Hiroo'], postcode: 'Shibuya-ku' },
      { name: 'Nakameguro', lat: 35.644, lon: 139.699, streets: ['Kamimeguro', 'Aobadai', 'Nakacho'], postcode: 'Meguro-ku' },
    ],
    address: (rand, area) => `${rand.int(1, 4)}-${rand.int(1, 30)}-${rand.int(1, 20)} ${rand.pick(area.streets)}, ${area.postcode}, Tokyo`,
  },
];

export const PROVIDERS_PER_CITY = 72;
const TIERS = ['BRONZE', 'SILVER', 'GOLD', 'PLATINUM'] as const;
type Tier = (typeof TIERS)[number];

/** mulberry32: tiny, fast and good enough for demo data. */
class Rand {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Roughly normal (sum of uniforms), for clustering around an area's centre. */
  spread(): number {
    return (this.next() + this.next() + this.next() - 1.5) / 1.5;
  }
}

const gymWords = [
  'Iron',
  'Pulse',
  'Core',
  'Summit',
  'Urban',
  'Peak',
  'Forge',
  'Atlas',
  'Vita',
  'Momentum',
  'Kinetic',
  'Apex',
  'Titan',
  'Elevate',
  'Grit',
  'Motion',
];
const gymKinds = ['Fitness', 'Athletic Club', 'Gym', 'Strength Lab', 'Training Studio', 'Performance', 'Fitness Club'];
const spaWords = [
  'Lotus',
  'Serenity',
  'Thermae',
  'Aqua',
  'Zen',
  'Blossom',
  'Cedar',
  'Hammam',
  'Tranquil',
  'Oasis',
  'Jade',
  'Lumen',
  'Salt & Stone',
  'Yuzu',
];
const spaKinds = ['Day Spa', 'Spa', 'Wellness', 'Bathhouse', 'Spa & Sauna', 'Retreat'];

const tierNotes: Record<Tier, string> = {
  BRONZE: 'Straightforward and good value.',
  SILVER: 'Well equipped, with showers and lockers.',
  GOLD: 'Premium equipment, towel service and a sauna.',
  PLATINUM: 'A members-club experience: pool, sauna, steam room and personal service.',
};

const services: { name: string; minutes: number }[] = [
  { name: 'Swedish Massage', minutes: 60 },
  { name: 'Deep Tissue Massage', minutes: 90 },
  { name: 'Hot Stone Massage', minutes: 75 },
  { name: 'Signature Facial', minutes: 45 },
  { name: 'Aromatherapy Massage', minutes: 60 },
  { name: 'Sauna & Steam Session', minutes: 120 },
  { name: 'Body Scrub', minutes: 45 },
  { name: 'Reflexology', minutes: 30 },
  { name: 'Shiatsu', minutes: 60 },
  { name: 'Hammam Ritual', minutes: 90 },
];
const creditsPerMinute: Record<Tier, number> = { BRONZE: 0.7, SILVER: 0.9, GOLD: 1.15, PLATINUM: 1.5 };

export const demoClassCategories: {
  name: string;
  description: string;
  capacity: [number, number];
  minutes: number[];
  classes: string[];
}[] = [
  {
    name: 'Yoga',
    description: 'Breath-led movement, from gentle to strong.',
    capacity: [12, 25],
    minutes: [60, 75],
    classes: ['Vinyasa Flow', 'Yin Yoga', 'Power Yoga', 'Sunrise Yoga'],
  },
  {
    name: 'Pilates',
    description: 'Core strength and control, on the mat or the reformer.',
    capacity: [6, 10],
    minutes: [45, 50],
    classes: ['Reformer Pilates', 'Mat Pilates'],
  },
  {
    name: 'HIIT',
    description: 'Short, hard intervals for conditioning.',
    capacity: [15, 25],
    minutes: [30, 45],
    classes: ['HIIT 45', 'Tabata Burn', 'Metcon'],
  },
  {
    name: 'Spin',
    description: 'Indoor cycling to the beat.',
    capacity: [20, 30],
    minutes: [45],
    classes: ['Rhythm Ride', 'Endurance Spin'],
  },
  { name: 'Boxing', description: 'Pads, bags and footwork.', capacity: [8, 12], minutes: [60], classes: ['Boxing Fundamentals', 'Boxfit'] },
  { name: 'Barre', description: 'Ballet-inspired strength and posture.', capacity: [10, 18], minutes: [50], classes: ['Barre Sculpt'] },
  {
    name: 'Strength',
    description: 'Barbells and kettlebells, coached.',
    capacity: [8, 16],
    minutes: [60],
    classes: ['Barbell Club', 'Kettlebell Strength'],
  },
];

const weekdayTimes = ['06:30', '07:00', '07:30', '12:00', '12:30', '17:30', '18:00', '18:30', '19:00', '19:30'];
const weekendTimes = ['08:30', '09:00', '10:00', '10:30', '11:00', '12:00'];

function hours(spec: Partial<Record<Weekday, [string, string] | null>>, fallback: [string, string] | null): OpeningHours {
  return Object.fromEntries(
    weekdays.map((d) => {
      const h = d in spec ? spec[d] : fallback;
      return [d, h ? [{ open: h[0], close: h[1] }] : []];
    }),
  ) as OpeningHours;
}

export interface DemoCatalog {
  catalog: Catalog;
  cities: (DemoCity & { providers: number })[];
  /** Instances whose spots are mostly held already (by the provider's own members): id → spots taken. */
  heldSpots: Map<string, number>;
}

/** Classes given exactly one spot left, one per demo reseller. */
export const LAST_SPOT_CLASSES = 2;

/**
 * The demo catalogue for a seed day `at`: instances over the 14 local days from the seed day,
 * all of them still in the future. `categoryIds` reuses stored class categories by name.
 */
export function buildDemoCatalog(at: Date, categoryIds: Map<string, string> = new Map()): DemoCatalog {
  const rand = new Rand(20261122);
  const t = at.getTime();
  const catalog: Catalog = {
    providers: [],
    copay_options: [],
    spa_services: [],
    class_categories: [],
    classes: [],
    class_instances: [],
    pass_packages: [],
  };
  const categoryId = new Map<string, string>();
  for (const c of demoClassCategories) {
    const stored = categoryIds.get(c.name);
    if (stored) categoryId.set(c.name, stored);
    else {
      const id = newId('classCategory', t);
      categoryId.set(c.name, id);
      catalog.class_categories.push({ id, name: c.name, description: c.description, active: true });
    }
  }
  const heldSpots = new Map<string, number>();
  const summary: DemoCatalog['cities'] = [];

  for (const city of cities) {
    const names = new Set<string>();
    for (let n = 0; n < PROVIDERS_PER_CITY; n++) {
      const area = city.areas[n % city.areas.length];
      const category = n % 5 < 3 ? 'GYM' : 'SPA';
      const tier = TIERS[rand.int(0, 9) < 3 ? 0 : rand.int(1, 3)];
      let name: string;
      do {
        name =
          category === 'GYM'
            ? `${rand.pick(gymWords)} ${rand.pick(gymKinds)} ${area.name}`
            : `${rand.pick(spaWords)} ${rand.pick(spaKinds)} ${area.name}`;
      } while (names.has(name));
      names.add(name);
      const provider: ProviderRecord = {
        id: newId('provider', t),
        name,
        category,
        tier,
        description: `${category === 'GYM' ? 'Gym' : 'Spa'} in ${area.name}, ${city.name}. ${tierNotes[tier]}`,
        address: city.address(rand, area),
        city: city.name,
        country: city.country,
        // About ±2.5 km around the area's centre.
        lat: round6(area.lat + rand.spread() * 0.022),
        lon: round6(area.lon + (rand.spread() * 0.022) / Math.cos((area.lat * Math.PI) / 180)),
        timezone: city.timezone,
        opening_hours:
          category === 'GYM'
            ? tier === 'PLATINUM'
              ? hours({}, ['05:30', '23:00'])
              : hours({ sat: ['08:00', '20:00'], sun: ['08:00', '20:00'] }, rand.chance(0.5) ? ['06:00', '22:00'] : ['06:30', '22:30'])
            : hours({ mon: rand.chance(0.4) ? null : ['12:00', '20:00'], sun: ['10:00', '18:00'] }, ['10:00', '21:00']),
        room_capacity: category === 'SPA' ? rand.int(1, 4) : 1,
        cancellation_policy:
          tier === 'PLATINUM'
            ? { free_cancellation_hours: 48, late_cancellation_refund_percent: 25 }
            : category === 'SPA'
              ? { free_cancellation_hours: 24, late_cancellation_refund_percent: 50 }
              : { free_cancellation_hours: 12, late_cancellation_refund_percent: 0 },
      };
      catalog.providers.push(provider);
      if (category === 'SPA') catalog.spa_services.push(...spaServices(rand, provider, t));
      else {
        if (tier === 'GOLD' || tier === 'PLATINUM') catalog.copay_options.push(...copayOptions(provider, t));
        addClasses(rand, provider, at, categoryId, catalog, heldSpots);
      }
    }
    summary.push({
      name: city.name,
      country: city.country,
      timezone: city.timezone,
      lat: city.lat,
      lon: city.lon,
      providers: PROVIDERS_PER_CITY,
    });
  }
  holdAllButOneSpot(catalog, at, cities[0].name, heldSpots);
  return { catalog, cities: summary, heldSpots };
}

/**
 * The first LAST_SPOT_CLASSES instances (by start, of different classes) at `city`'s BRONZE and
 * SILVER gyms that start one to four days after `at`: all their spots but one held.
 */
function holdAllButOneSpot(catalog: Catalog, at: Date, city: string, heldSpots: Map<string, number>) {
  const providers = new Map(catalog.providers.map((p) => [p.id, p]));
  const gymOf = new Map(catalog.classes.map((c) => [c.id, providers.get(c.provider_id)!]));
  const from = at.getTime() + 24 * 3600_000;
  const to = at.getTime() + 96 * 3600_000;
  const candidates = catalog.class_instances
    .flatMap((i) => {
      const gym = gymOf.get(i.class_id)!;
      if (gym.city !== city || (gym.tier !== 'BRONZE' && gym.tier !== 'SILVER')) return [];
      const start = zonedInstant(i.date, i.time, gym.timezone)!.getTime();
      return start >= from && start <= to ? [{ instance: i, start }] : [];
    })
    .sort((a, b) => a.start - b.start || (a.instance.id < b.instance.id ? -1 : 1));
  const classes = new Set<string>();
  for (const { instance } of candidates) {
    if (classes.size === LAST_SPOT_CLASSES) break;
    if (classes.has(instance.class_id)) continue;
    classes.add(instance.class_id);
    heldSpots.set(instance.id, instance.capacity - 1);
  }
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

function spaServices(rand: Rand, provider: ProviderRecord, t: number): SpaServiceRecord[] {
  const offered = [...services].sort(() => rand.next() - 0.5).slice(0, rand.int(3, 6));
  return offered.map((s) => {
    const credits = Math.max(10, Math.round((s.minutes * creditsPerMinute[provider.tier as Tier]) / 5) * 5);
    // A co-pay is the same price in money: 1 credit = 1 major unit.
    return {
      id: newId('service', t),
      provider_id: provider.id,
      name: s.name,
      duration_minutes: s.minutes,
      credits,
      copay_amount: credits * 100,
      currency: 'EUR',
    };
  });
}

function copayOptions(provider: ProviderRecord, t: number): CopayOptionRecord[] {
  const day = provider.tier === 'PLATINUM' ? 2500 : 1500;
  return [
    {
      id: newId('copayOption', t),
      provider_id: provider.id,
      name: 'Day pass',
      currency: 'EUR',
      tiers: [provider.tier],
      max_visits: 1,
      visit_duration_days: 1,
      client_copay_amount: day,
      client_copay_credits: day / 100,
    },
    {
      id: newId('copayOption', t),
      provider_id: provider.id,
      name: '10 visits in 60 days',
      currency: 'EUR',
      tiers: [provider.tier],
      max_visits: 10,
      visit_duration_days: 60,
      client_copay_amount: day * 8,
      client_copay_credits: (day * 8) / 100,
    },
  ];
}

function addClasses(
  rand: Rand,
  provider: ProviderRecord,
  at: Date,
  categoryId: Map<string, string>,
  catalog: Catalog,
  heldSpots: Map<string, number>,
) {
  const today = localDateOf(at, provider.timezone);
  for (let k = rand.int(2, 4); k > 0; k--) {
    const category = rand.pick(demoClassCategories);
    const cls: ClassRecord = {
      id: newId('class', at.getTime()),
      provider_id: provider.id,
      category_id: categoryId.get(category.name)!,
      name: rand.pick(category.classes),
      description: `${category.description} At ${provider.name}.`,
      duration_minutes: rand.pick(category.minutes),
    };
    catalog.classes.push(cls);
    const capacity = rand.int(category.capacity[0], category.capacity[1]);
    // A weekly timetable of 3–5 sessions, inside opening hours.
    const slots = new Map<string, { day: Weekday; time: string }>();
    for (let s = rand.int(3, 5); s > 0; s--) {
      const day = rand.pick(weekdays);
      const time = rand.pick(day === 'sat' || day === 'sun' ? weekendTimes : weekdayTimes);
      const open = provider.opening_hours[day]?.[0];
      if (open && minutesOf(time) >= minutesOf(open.open) && minutesOf(time) + cls.duration_minutes <= minutesOf(open.close))
        slots.set(`${day} ${time}`, { day, time });
    }
    for (let d = 0; d < 14; d++) {
      const date = addDays(today, d);
      for (const slot of slots.values()) {
        if (slot.day !== weekdayOf(date)) continue;
        const start = zonedInstant(date, slot.time, provider.timezone);
        if (!start || start.getTime() <= at.getTime()) continue;
        const id = newId('classInstance', at.getTime());
        catalog.class_instances.push({ id, class_id: cls.id, date, time: slot.time, capacity, status: 'SCHEDULED' });
        if (rand.chance(0.15)) heldSpots.set(id, Math.max(0, capacity - rand.int(1, 2)));
        else if (rand.chance(0.03)) heldSpots.set(id, capacity);
      }
    }
  }
}
