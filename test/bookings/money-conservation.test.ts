import fc from 'fast-check';
import { describe, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { bookingInvariantViolations, clientOnPass, worldScope } from '../support/bookings-invariants.ts';
import { createClassInstance } from '../support/catalog.ts';
import { businessLedger } from '../support/factories.ts';
import { v3, type Reply } from '../support/http.ts';

// Random sequences of bookings, confirms, cancels, reschedules and clock moves never create or
// lose money, visits, spots or rooms (docs/domain-rules.md "Money"). Each run gets a fresh world and a model
// of it written from the README's rules: every answer must be the one the model predicts (2xx or a
// documented 4xx, never a 5xx), and after the sequence the database must agree with the model and
// with itself (test/support/bookings-invariants.ts): balances and wallets equal their ledgers and
// what the bookings say they paid and got back, pass counters and entitlements equal the visit
// ledger, spots equal live bookings, rooms are never over capacity.

// A Friday. The month ends on Tuesday the 31st; Berlin moves to summer time on Sunday the 29th.
const BASE = new Date('2026-03-27T08:00:00Z');
const app = useApp({}, { now: BASE });
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const RUNS = Number(process.env.BOOKING_PROPERTY_RUNS ?? 40);

// ── the world a run starts from ────────────────────────────────────────────────────────────────

/** Services of either spa by index: Massage (60 min), Sauna (15 min), or both. */
const SERVICES = [
  { minutes: 60, credits: 30, copay: 4500, pick: (s: { massage: string; sauna: string }) => [s.massage] },
  { minutes: 15, credits: 10, copay: 1500, pick: (s: { massage: string; sauna: string }) => [s.sauna] },
  { minutes: 75, credits: 40, copay: 6000, pick: (s: { massage: string; sauna: string }) => [s.massage, s.sauna] },
];
const SPA_TIMES = ['09:00', '10:00', '10:30', '11:15', '17:00'];
const GYM_HOURS = [3, 26, 50, 300];
const COPAY_GYM_HOURS = [5, 30, 150];
const CAPACITY = 2;
const SPA_ROOMS = { spa: 2, copaySpa: 1 };
const COPAY_OPTION = { amount: 2500, visits: 3, days: 30 };

type SpaName = 'spa' | 'copaySpa';
interface Client {
  id: string;
  issuedPassId: string;
  allowed: number;
  costPerVisit: number;
  wallet: number;
  period: string;
  count: number;
  expires: number;
}
interface Instance {
  id: string;
  provider: 'gym' | 'copayGym';
  start: number;
}
interface Entitlement {
  kind: 'EXTRA_VISITS' | 'COPAY';
  client: number;
  total: number;
  used: number;
  validFrom: number;
  validUntil: number;
  seq: number;
}
type Source = { kind: 'PASS'; period: string } | { kind: 'ENTITLEMENT'; entitlement: Entitlement } | null;
interface Booking {
  id: string;
  client: number;
  type: 'spa' | 'class';
  spa?: SpaName;
  services?: number;
  instance?: Instance;
  start: number;
  end: number;
  credits: number;
  copay: number | null;
  source: Source;
  status: 'LIVE' | 'CANCELLED' | 'RESCHEDULED';
}
interface Session {
  id: string;
  client: number;
  kind: 'SPA_COPAY' | 'CLASS_COPAY' | 'CLASS_EXTRA_VISITS';
  created: number;
  confirmed: boolean;
  instance?: Instance;
  spa?: { date: string; time: string; services: number; start: number; end: number };
  costPerVisit?: number;
}

interface Model {
  w: BookingWorld;
  clients: Client[];
  gym: Instance[];
  copayGym: Instance[];
  balance: number;
  bookings: Booking[];
  sessions: Session[];
  entitlements: Entitlement[];
}

async function freshWorld(run: number): Promise<Model> {
  app.clock.set(BASE);
  const w = await createBookingWorld(app, { spaCapacity: SPA_ROOMS.spa });
  const expires = Date.UTC(2026, 3, 27, 8); // MONTHLY passes issued at BASE
  const period = '2026-03';
  const clients: Client[] = [{ ...w.client, allowed: 8, costPerVisit: 1000, wallet: 50, period, count: 0, expires }];
  for (const n of [1, 2]) {
    // One gym visit a month for 3000 (an extra visit costs 3000), and credits enough to fill the spa.
    const c = await clientOnPass(app, w, { gymVisits: 1, price: 3000, credits: 200, email: `run${run}.client${n}@example.com` });
    clients.push({ ...c, allowed: 1, costPerVisit: 3000, wallet: 200, period, count: 0, expires });
  }
  const instances = async (classId: string, provider: Instance['provider'], hours: number[]) =>
    Promise.all(
      hours.map(async (h) => {
        const start = BASE.getTime() + h * HOUR;
        return { id: (await createClassInstance(app, classId, new Date(start), { capacity: CAPACITY })).id, provider, start };
      }),
    );
  return {
    w,
    clients,
    gym: await instances(w.gym.classId, 'gym', GYM_HOURS),
    copayGym: await instances(w.copayGym.classId, 'copayGym', COPAY_GYM_HOURS),
    balance: (await businessLedger(app, w.reseller.id)).balance,
    bookings: [],
    sessions: [],
    entitlements: [],
  };
}

// ── actions ────────────────────────────────────────────────────────────────────────────────────

const client = fc.integer({ min: 0, max: 2 });
const day = fc.integer({ min: 0, max: 2 });
const time = fc.constantFrom(...SPA_TIMES);
const services = fc.integer({ min: 0, max: 2 });
const purchase = { visits: fc.integer({ min: 1, max: 3 }), duration: fc.constantFrom('MONTHLY' as const, 'ANNUALLY' as const) };

const actionArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('class' as const),
      client,
      instance: fc.nat(GYM_HOURS.length - 1),
      confirm: fc.boolean(),
      retry: fc.boolean(),
      ...purchase,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('classCopay' as const),
      client,
      instance: fc.nat(COPAY_GYM_HOURS.length - 1),
      confirm: fc.boolean(),
      retry: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('spa' as const), client, day, time, services }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('spaCopay' as const),
      client,
      day,
      time,
      services,
      confirm: fc.boolean(),
      retry: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('confirmLater' as const), session: fc.nat(), retry: fc.boolean(), ...purchase }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('cancel' as const), booking: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reschedule' as const),
      booking: fc.nat(),
      instance: fc.nat(GYM_HOURS.length - 1),
      day,
      time,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      step: fc.constantFrom('1h' as const, '6h' as const, '25h' as const, 'nextMonth' as const),
    }),
  },
);
type Action = typeof actionArb extends fc.Arbitrary<infer A> ? A : never;

// ── the model's rules (docs/partner-guide.md "Bookings") ──────────────────────────────────────────────────────

const now = () => app.clock.now().getTime();
const monthOf = (at: number) => new Date(at).toISOString().slice(0, 7);
/** A date `d` days after the clock's (UTC) date: appointments stay near now as the clock moves. */
const spaDate = (d: number) => new Date(now() + d * DAY).toISOString().slice(0, 10);
/** A Berlin wall time as an instant: UTC+1 until the change on 2026-03-29 at 02:00, UTC+2 after (every time used here is 09:00 or later). */
function berlin(date: string, hhmm: string): number {
  const offset = date >= '2026-03-29' ? 2 : 1;
  return Date.UTC(+date.slice(0, 4), +date.slice(5, 7) - 1, +date.slice(8, 10), +hhmm.slice(0, 2) - offset, +hhmm.slice(3, 5));
}
/** Opening hours 09:00–18:00: the whole appointment must end by closing. */
const fitsHours = (hhmm: string, minutes: number) => {
  const start = +hhmm.slice(0, 2) * 60 + +hhmm.slice(3, 5);
  return start >= 9 * 60 && start % 15 === 0 && start + minutes <= 18 * 60;
};

interface Expected {
  status: number;
  code?: string;
  param?: string;
}
const fail = (status: number, code: string, param?: string): Expected => ({ status, code, ...(param ? { param } : {}) });

const live = (m: Model) => m.bookings.filter((b) => b.status === 'LIVE');
const liveOn = (m: Model, inst: Instance) => live(m).filter((b) => b.instance === inst);
/** The most live appointments running at one moment of [start, end) at a spa, `except` one booking. */
function peak(m: Model, spa: SpaName, start: number, end: number, except?: Booking): number {
  const running = live(m).filter((b) => b !== except && b.spa === spa && b.start < end && b.end > start);
  const moments = [start, ...running.map((b) => b.start).filter((t) => t > start)];
  return Math.max(0, ...moments.map((t) => running.filter((b) => b.start <= t && b.end > t).length));
}
/** The pass must be active now and still valid when the appointment starts. */
const passRefusal = (c: Client, start: number): Expected | undefined =>
  c.expires <= now() || c.expires <= start ? fail(409, 'pass_not_active') : undefined;
/** Under the instance lock: started, then the holder, then one live booking per client, then a spot. */
function classRefusal(m: Model, who: number, inst: Instance): Expected | undefined {
  if (inst.start <= now()) return fail(409, 'class_not_bookable');
  const pass = passRefusal(m.clients[who], inst.start);
  if (pass) return pass;
  if (liveOn(m, inst).some((b) => b.client === who)) return fail(409, 'already_booked');
  if (liveOn(m, inst).length >= CAPACITY) return fail(409, 'class_full');
  return undefined;
}
/** The client's usable entitlement of a kind, ending first (then the older one). */
function usableEntitlement(m: Model, who: number, kind: Entitlement['kind']): Entitlement | undefined {
  return m.entitlements
    .filter((e) => e.client === who && e.kind === kind && e.validFrom <= now() && e.validUntil > now() && e.used < e.total)
    .sort((a, b) => a.validUntil - b.validUntil || a.seq - b.seq)[0];
}
function takeEntitlement(m: Model, who: number, kind: Entitlement['kind']): Source {
  const e = usableEntitlement(m, who, kind);
  if (!e) return null;
  e.used += 1;
  return { kind: 'ENTITLEMENT', entitlement: e };
}
/** One visit of the month from the pass counter, when the cap allows. */
function takePassVisit(c: Client): Source {
  const period = monthOf(now());
  const used = c.period === period ? c.count : 0;
  if (used >= c.allowed) return null;
  c.period = period;
  c.count = used + 1;
  return { kind: 'PASS', period };
}
const startOfNextMonth = (at: number) => {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};
const inAYear = (at: number) => {
  const d = new Date(at);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.getTime();
};

// ── running an action against the app and the model ────────────────────────────────────────────

class Mismatch extends Error {}

function expectReply(res: Reply, expected: Expected, what: string): void {
  const got =
    res.status >= 400
      ? { status: res.status, code: res.body?.error?.code, ...(res.body?.error?.param ? { param: res.body.error.param } : {}) }
      : { status: res.status };
  if (res.status >= 500 || JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Mismatch(`${what}: expected ${JSON.stringify(expected)}, got ${res.status} ${res.text}`);
  }
}
function expectBody(res: Reply, shape: Record<string, unknown>, what: string): void {
  for (const [k, v] of Object.entries(shape)) {
    if (JSON.stringify(res.body[k]) !== JSON.stringify(v)) throw new Mismatch(`${what}: ${k} should be ${JSON.stringify(v)}: ${res.text}`);
  }
}

let keys = 0;
/** A confirm, with an Idempotency-Key when `retry`: the retry must replay the first answer byte for byte and change nothing. */
async function confirmRequest(m: Model, s: Session, body: Record<string, unknown> | undefined, retry: boolean): Promise<Reply> {
  const path = `/bookings/${s.kind === 'SPA_COPAY' ? 'spa' : 'class'}/${s.id}/confirm`;
  const send = (idempotencyKey?: string) =>
    v3(app, path, { key: m.w.reseller.key, ...(body ? { body } : { method: 'POST' }), idempotencyKey });
  if (!retry) return send();
  const key = `confirm-${++keys}`;
  const first = await send(key);
  const again = await send(key);
  if (again.text !== first.text || again.status !== first.status || again.headers.get('x-idempotent-replayed') !== 'true') {
    throw new Mismatch(
      `retry of ${path} with its Idempotency-Key did not replay: ${first.status} ${first.text} then ${again.status} ${again.text}`,
    );
  }
  return first;
}

async function confirmSession(
  m: Model,
  s: Session,
  p: { visits: number; duration: 'MONTHLY' | 'ANNUALLY' },
  retry: boolean,
): Promise<void> {
  const c = m.clients[s.client];
  const what = `confirm ${s.kind} ${s.id}`;
  const body =
    s.kind === 'CLASS_EXTRA_VISITS'
      ? { number_of_visits: p.visits, duration: p.duration }
      : s.kind === 'CLASS_COPAY'
        ? { copay_package_id: m.w.copayGym.optionId }
        : undefined;
  const res = await confirmRequest(m, s, body, retry);
  let refusal: Expected | undefined;
  if (s.confirmed) refusal = fail(409, 'session_already_confirmed');
  else if (now() >= s.created + DAY) refusal = fail(422, 'session_expired');
  else if (s.spa) {
    refusal =
      passRefusal(c, s.spa.start) ??
      (s.spa.start <= now() || peak(m, 'copaySpa', s.spa.start, s.spa.end) >= SPA_ROOMS.copaySpa
        ? fail(409, 'slot_unavailable')
        : undefined);
  } else refusal = classRefusal(m, s.client, s.instance!);
  if (refusal) return expectReply(res, refusal, what);
  expectReply(res, { status: 201 }, what);

  s.confirmed = true;
  if (s.spa) {
    const { copay } = SERVICES[s.spa.services];
    expectBody(
      res,
      { status: 'PENDING', type: 'spa', copay_amount: copay, credits_charged: 0, visits_deducted: 0, scheduled_for: s.spa.start / 1000 },
      what,
    );
    m.balance -= copay;
    m.bookings.push({
      id: res.body.id,
      client: s.client,
      type: 'spa',
      spa: 'copaySpa',
      services: s.spa.services,
      start: s.spa.start,
      end: s.spa.end,
      credits: 0,
      copay,
      source: null,
      status: 'LIVE',
    });
    return;
  }
  const kind = s.kind === 'CLASS_EXTRA_VISITS' ? ('EXTRA_VISITS' as const) : ('COPAY' as const);
  const amount = kind === 'EXTRA_VISITS' ? s.costPerVisit! * p.visits : COPAY_OPTION.amount;
  m.balance -= amount;
  m.entitlements.push({
    kind,
    client: s.client,
    total: kind === 'EXTRA_VISITS' ? p.visits : COPAY_OPTION.visits,
    used: 0,
    validFrom: now(),
    seq: m.entitlements.length,
    validUntil: kind === 'COPAY' ? now() + COPAY_OPTION.days * DAY : p.duration === 'MONTHLY' ? startOfNextMonth(now()) : inAYear(now()),
  });
  const source = takeEntitlement(m, s.client, kind);
  expectBody(res, { status: 'PENDING', type: 'class', visits_deducted: 1, credits_charged: 0, class_instance_id: s.instance!.id }, what);
  m.bookings.push({
    id: res.body.id,
    client: s.client,
    type: 'class',
    instance: s.instance,
    start: s.instance!.start,
    end: s.instance!.start + HOUR,
    credits: 0,
    copay: null,
    source,
    status: 'LIVE',
  });
}

async function bookClass(m: Model, a: Extract<Action, { kind: 'class' | 'classCopay' }>): Promise<void> {
  const inst = a.kind === 'class' ? m.gym[a.instance] : m.copayGym[a.instance];
  const what = `${a.kind} for client ${a.client} on ${inst.id}`;
  const res = await v3(app, '/bookings/class', {
    key: m.w.reseller.key,
    body: { class_instance_id: inst.id, client_id: m.clients[a.client].id },
  });
  const refusal = classRefusal(m, a.client, inst);
  if (refusal) return expectReply(res, refusal, what);
  expectReply(res, { status: 201 }, what);
  const c = m.clients[a.client];
  const source =
    a.kind === 'class' ? (takePassVisit(c) ?? takeEntitlement(m, a.client, 'EXTRA_VISITS')) : takeEntitlement(m, a.client, 'COPAY');
  if (source) {
    expectBody(res, { status: 'PENDING', visits_deducted: 1, scheduled_for: inst.start / 1000 }, what);
    m.bookings.push({
      id: res.body.booking_id,
      client: a.client,
      type: 'class',
      instance: inst,
      start: inst.start,
      end: inst.start + HOUR,
      credits: 0,
      copay: null,
      source,
      status: 'LIVE',
    });
    return;
  }
  const session: Session = {
    id: res.body.session_id,
    client: a.client,
    kind: a.kind === 'class' ? 'CLASS_EXTRA_VISITS' : 'CLASS_COPAY',
    created: now(),
    confirmed: false,
    instance: inst,
  };
  if (a.kind === 'class') {
    const used = c.period === monthOf(now()) ? c.count : 0;
    expectBody(
      res,
      {
        status: 'AWAITING_VISITS',
        additional_visits_required: true,
        visits_used: used,
        max_visits: c.allowed,
        cost_per_visit: c.costPerVisit,
      },
      what,
    );
    session.costPerVisit = c.costPerVisit;
  } else {
    expectBody(res, { status: 'AWAITING_COPAY', copay_required: true }, what);
    if (res.body.copay_options.map((o: { id: string }) => o.id).join() !== m.w.copayGym.optionId)
      throw new Mismatch(`${what}: copay_options ${res.text}`);
  }
  m.sessions.push(session);
  if (a.confirm)
    await confirmSession(m, session, { visits: 'visits' in a ? a.visits : 1, duration: 'duration' in a ? a.duration : 'MONTHLY' }, a.retry);
}

async function bookSpa(m: Model, a: Extract<Action, { kind: 'spa' | 'spaCopay' }>): Promise<void> {
  const spa: SpaName = a.kind === 'spa' ? 'spa' : 'copaySpa';
  const service = SERVICES[a.services];
  const date = spaDate(a.day);
  const start = berlin(date, a.time);
  const end = start + service.minutes * 60_000;
  const c = m.clients[a.client];
  const what = `${a.kind} for client ${a.client} at ${date} ${a.time} (${service.minutes} min)`;
  const res = await v3(app, '/bookings/spa', {
    key: m.w.reseller.key,
    body: { date, time: a.time, spa_id: m.w[spa].id, service_ids: service.pick(m.w[spa]), client_id: c.id },
  });
  const refusal =
    start <= now()
      ? fail(400, 'validation_error', 'time')
      : (passRefusal(c, start) ??
        (!fitsHours(a.time, service.minutes)
          ? fail(400, 'validation_error', 'time')
          : peak(m, spa, start, end) >= SPA_ROOMS[spa]
            ? fail(409, 'slot_unavailable')
            : spa === 'spa' && c.wallet < service.credits
              ? fail(400, 'insufficient_credits')
              : undefined));
  if (refusal) return expectReply(res, refusal, what);
  expectReply(res, { status: 201 }, what);
  if (spa === 'spa') {
    expectBody(res, { status: 'PENDING', copay_required: false, scheduled_for: start / 1000 }, what);
    c.wallet -= service.credits;
    m.bookings.push({
      id: res.body.booking_id,
      client: a.client,
      type: 'spa',
      spa,
      services: a.services,
      start,
      end,
      credits: service.credits,
      copay: null,
      source: null,
      status: 'LIVE',
    });
    return;
  }
  expectBody(
    res,
    {
      status: 'AWAITING_COPAY',
      copay_required: true,
      copay_amount: service.copay,
      copay_credits: service.credits,
      scheduled_for: start / 1000,
    },
    what,
  );
  const session: Session = {
    id: res.body.session_id,
    client: a.client,
    kind: 'SPA_COPAY',
    created: now(),
    confirmed: false,
    spa: { date, time: a.time, services: a.services, start, end },
  };
  m.sessions.push(session);
  if ('confirm' in a && a.confirm) await confirmSession(m, session, { visits: 1, duration: 'MONTHLY' }, a.retry);
}

async function cancel(m: Model, a: Extract<Action, { kind: 'cancel' }>): Promise<void> {
  if (m.bookings.length === 0) return;
  const b = m.bookings[a.booking % m.bookings.length];
  const what = `cancel ${b.type} booking ${b.id}`;
  const res = await v3(app, `/bookings/${b.id}/cancel`, { key: m.w.reseller.key, method: 'POST' });
  if (b.status === 'CANCELLED') return expectReply(res, fail(409, 'already_cancelled'), what);
  if (b.status === 'RESCHEDULED' || b.start <= now()) return expectReply(res, fail(409, 'not_cancellable'), what);
  expectReply(res, { status: 200 }, what);
  // Free until 24 h before the start (the catalogue factory's providers), then 50%, rounded down.
  const full = b.start - now() >= DAY;
  const percent = full ? 100 : 50;
  const credits = Math.floor((b.credits * percent) / 100);
  const copay = Math.floor(((b.copay ?? 0) * percent) / 100);
  let visits = 0;
  if (full && b.type === 'class') {
    const src = b.source!;
    if (src.kind === 'ENTITLEMENT') {
      src.entitlement.used -= 1;
      visits = 1;
    } else {
      // Back to the pass counter only while it is that month's: a month gone by gets nothing back.
      const c = m.clients[b.client];
      if (src.period === monthOf(now()) && c.period === src.period && c.count > 0) {
        c.count -= 1;
        visits = 1;
      }
    }
  }
  expectBody(
    res,
    {
      status: 'CANCELLED',
      refund: {
        policy: full ? 'FULL' : 'LATE',
        credits_refunded: credits,
        visits_restored: visits,
        copay_refunded: copay,
        currency: 'EUR',
      },
    },
    what,
  );
  m.clients[b.client].wallet += credits;
  m.balance += copay;
  b.status = 'CANCELLED';
}

async function reschedule(m: Model, a: Extract<Action, { kind: 'reschedule' }>): Promise<void> {
  if (m.bookings.length === 0) return;
  const b = m.bookings[a.booking % m.bookings.length];
  const c = m.clients[b.client];
  const what = `reschedule ${b.type} booking ${b.id}`;
  const notMovable = b.status !== 'LIVE' || b.start <= now() ? fail(409, 'not_reschedulable') : undefined;
  let moved: Booking;
  if (b.type === 'spa') {
    const date = spaDate(a.day);
    const start = berlin(date, a.time);
    const end = start + SERVICES[b.services!].minutes * 60_000;
    const res = await v3(app, `/bookings/${b.id}/reschedule`, { key: m.w.reseller.key, body: { date, time: a.time } });
    const refusal =
      notMovable ??
      (start <= now()
        ? fail(400, 'validation_error', 'time')
        : (passRefusal(c, start) ??
          (!fitsHours(a.time, SERVICES[b.services!].minutes)
            ? fail(400, 'validation_error', 'time')
            : // The appointment leaves its own time first: it may move within it.
              peak(m, b.spa!, start, end, b) >= SPA_ROOMS[b.spa!]
              ? fail(409, 'slot_unavailable')
              : undefined)));
    if (refusal) return expectReply(res, refusal, what);
    expectReply(res, { status: 201 }, what);
    expectBody(
      res,
      { status: 'PENDING', rescheduled_from: b.id, date, time: a.time, scheduled_for: start / 1000, credits_charged: b.credits },
      what,
    );
    moved = { ...b, id: res.body.id, start, end };
  } else {
    const targets = b.instance!.provider === 'gym' ? m.gym : m.copayGym;
    const target = targets[a.instance % targets.length];
    const res = await v3(app, `/bookings/${b.id}/reschedule`, { key: m.w.reseller.key, body: { class_instance_id: target.id } });
    const refusal =
      notMovable ?? (target === b.instance ? fail(400, 'validation_error', 'class_instance_id') : classRefusal(m, b.client, target));
    if (refusal) return expectReply(res, refusal, what);
    expectReply(res, { status: 201 }, what);
    expectBody(
      res,
      { status: 'PENDING', rescheduled_from: b.id, class_instance_id: target.id, visits_deducted: 1, scheduled_for: target.start / 1000 },
      what,
    );
    moved = { ...b, id: res.body.id, instance: target, start: target.start, end: target.start + HOUR };
  }
  b.status = 'RESCHEDULED';
  m.bookings.push(moved);
}

async function runAction(m: Model, a: Action): Promise<void> {
  switch (a.kind) {
    case 'class':
    case 'classCopay':
      return bookClass(m, a);
    case 'spa':
    case 'spaCopay':
      return bookSpa(m, a);
    case 'confirmLater':
      if (m.sessions.length > 0) await confirmSession(m, m.sessions[a.session % m.sessions.length], a, a.retry);
      return;
    case 'cancel':
      return cancel(m, a);
    case 'reschedule':
      return reschedule(m, a);
    case 'clock': {
      const april = Date.UTC(2026, 3, 1, 0, 30);
      const step = { '1h': HOUR, '6h': 6 * HOUR, '25h': 25 * HOUR, nextMonth: now() < april ? april - now() : HOUR }[a.step];
      app.clock.set(new Date(now() + step));
    }
  }
}

// ── after a sequence: the database agrees with itself and with the model ───────────────────────

async function disagreements(m: Model): Promise<string[]> {
  const problems = await bookingInvariantViolations(app, worldScope(m.w));
  const note = (what: string, db: unknown, model: unknown) => {
    if (JSON.stringify(db) !== JSON.stringify(model))
      problems.push(`${what}: database ${JSON.stringify(db)}, model ${JSON.stringify(model)}`);
  };
  note('business balance', (await businessLedger(app, m.w.reseller.id)).balance, m.balance);
  for (const [i, c] of m.clients.entries()) {
    const [row] = await app.sql<{ credit_balance: string; visits_period: string; visits_used: Record<string, number> }>(
      'select c.credit_balance, ip.visits_period, ip.visits_used from client c join issued_pass ip on ip.client_id = c.id where c.id = ?',
      [c.id],
    );
    note(`client ${i} wallet`, Number(row.credit_balance), c.wallet);
    note(`client ${i} gym counter`, [row.visits_period, row.visits_used.GYM ?? 0], [c.period, c.count]);
  }
  const entitlements = await app.sql<{ kind: string; visits_total: number; visits_used: number; client_id: string }>(
    'select kind, visits_total, visits_used, client_id from visit_entitlement where reseller_id = ? order by id',
    [m.w.reseller.id],
  );
  note(
    'entitlements',
    entitlements,
    m.entitlements.map((e) => ({ kind: e.kind, visits_total: e.total, visits_used: e.used, client_id: m.clients[e.client].id })),
  );
  const spots = await app.sql<{ id: string; spots_taken: number }>(
    'select id, spots_taken from class_instance where id in (?) order by id',
    [[...m.gym, ...m.copayGym].map((i) => i.id)],
  );
  note(
    'spots',
    spots,
    [...m.gym, ...m.copayGym].sort((x, y) => (x.id < y.id ? -1 : 1)).map((i) => ({ id: i.id, spots_taken: liveOn(m, i).length })),
  );
  const statuses = await app.sql<{ id: string; status: string }>('select id, status from booking where reseller_id = ? order by id', [
    m.w.reseller.id,
  ]);
  const modelStatus = { LIVE: 'PENDING', CANCELLED: 'CANCELLED', RESCHEDULED: 'RESCHEDULED' };
  note(
    'bookings',
    statuses,
    m.bookings.map((b) => ({ id: b.id, status: modelStatus[b.status] })).sort((x, y) => (x.id < y.id ? -1 : 1)),
  );
  return problems;
}

describe('money, visits, spots and rooms are conserved', () => {
  it(`over random sequences of bookings, confirms, cancels, reschedules and clock moves (${RUNS} runs, a fresh world each)`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 8, maxLength: 30, size: 'max' }), async (actions) => {
        const m = await freshWorld(++run);
        const trace: string[] = [];
        try {
          for (const [i, a] of actions.entries()) {
            trace.push(`${i}: ${JSON.stringify(a)} at ${new Date(now()).toISOString()}`);
            await runAction(m, a);
          }
        } catch (err) {
          if (err instanceof Mismatch) throw new Error(`${err.message}\n${trace.join('\n')}`, { cause: err });
          throw err;
        }
        const problems = await disagreements(m);
        if (problems.length) throw new Error(`after the sequence:\n${problems.join('\n')}\n${trace.join('\n')}`);
      }),
      { numRuns: RUNS },
    );
  }, 240_000);
});
