import type { TestApp } from './app.ts';
import { registerDbTable } from './db-state.ts';
import {
  createClass,
  createClassCategory,
  createClassInstance,
  createCopayOption,
  createProvider,
  createSpaService,
  everyDay,
} from './catalog.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from './factories.ts';
import { v3 } from './http.ts';

// A booking world: a funded reseller whose pass covers SILVER gyms (8 visits a month) and SILVER
// spas (50 credits a period), a client holding it, and providers around it: covered and
// uncovered spas and gyms, with classes. Bookings' tables join every dbState.

registerDbTable('booking', 'select id, status, refund, rescheduled_to, history from booking order by id');
registerDbTable('booking_session', 'select id, status, booking_id from booking_session order by id');
registerDbTable('visit_entitlement', 'select id, visits_used from visit_entitlement order by id');
registerDbTable('visit_transaction');
registerDbTable('class_instance', 'select id, spots_taken from class_instance order by id');

export interface BookingWorld {
  reseller: TestReseller;
  passId: string;
  client: { id: string; issuedPassId: string };
  /** SPA SILVER, covered: Massage 60 min 30 credits, Sauna 15 min 10 credits; one room. */
  spa: { id: string; massage: string; sauna: string };
  /** SPA GOLD, not covered; its services carry co-pays (4500 and 1500 EUR cents). */
  copaySpa: { id: string; massage: string; sauna: string };
  /** SPA GOLD, not covered, no co-pay prices. */
  closedSpa: { id: string; service: string };
  /** GYM SILVER, covered, with a class. */
  gym: { id: string; classId: string };
  /** GYM GOLD, not covered, with a class and one co-pay option (3 visits for 30 days, 2500). */
  copayGym: { id: string; classId: string; optionId: string };
  categoryId: string;
}

export async function createBookingWorld(
  app: TestApp,
  opts: { balance?: number; timezone?: string; spaCapacity?: number } = {},
): Promise<BookingWorld> {
  const timezone = opts.timezone ?? 'Europe/Berlin';
  const reseller = await createReseller(app, { balance: opts.balance ?? 1_000_000 });
  const pass = await createPassPackage(app, reseller, { price: 8000 });
  const issued = await issuePass(app, reseller, pass.id);
  const hours = everyDay('09:00', '18:00');
  const spa = await createProvider(app, {
    category: 'SPA',
    tier: 'SILVER',
    name: 'Silver Spa',
    timezone,
    openingHours: hours,
    roomCapacity: opts.spaCapacity ?? 1,
  });
  const copaySpa = await createProvider(app, {
    category: 'SPA',
    tier: 'GOLD',
    name: 'Gold Spa',
    timezone,
    openingHours: hours,
    roomCapacity: 1,
  });
  const closedSpa = await createProvider(app, { category: 'SPA', tier: 'GOLD', name: 'Closed Spa', timezone, openingHours: hours });
  const gym = await createProvider(app, { category: 'GYM', tier: 'SILVER', name: 'Silver Gym', timezone });
  const copayGym = await createProvider(app, { category: 'GYM', tier: 'GOLD', name: 'Gold Gym', timezone });
  const category = await createClassCategory(app, { name: `Yoga ${gym.id.slice(-6)}` });
  return {
    reseller,
    passId: pass.id,
    client: { id: issued.client_id, issuedPassId: issued.id },
    spa: {
      id: spa.id,
      massage: (await createSpaService(app, spa.id, { name: 'Massage', durationMinutes: 60, credits: 30 })).id,
      sauna: (await createSpaService(app, spa.id, { name: 'Sauna', durationMinutes: 15, credits: 10 })).id,
    },
    copaySpa: {
      id: copaySpa.id,
      massage: (await createSpaService(app, copaySpa.id, { name: 'Massage', durationMinutes: 60, credits: 30, copayAmount: 4500 })).id,
      sauna: (await createSpaService(app, copaySpa.id, { name: 'Sauna', durationMinutes: 15, credits: 10, copayAmount: 1500 })).id,
    },
    closedSpa: { id: closedSpa.id, service: (await createSpaService(app, closedSpa.id, { copayAmount: null })).id },
    gym: { id: gym.id, classId: (await createClass(app, gym.id, category.id, { name: 'Morning Flow' })).id },
    copayGym: {
      id: copayGym.id,
      classId: (await createClass(app, copayGym.id, category.id, { name: 'Power Hour' })).id,
      optionId: (await createCopayOption(app, copayGym.id, { name: '3 visits', maxVisits: 3, visitDurationDays: 30, amount: 2500 })).id,
    },
    categoryId: category.id,
  };
}

/** An instance of `classId` starting `hoursAhead` hours after the app's now. */
export async function instanceIn(
  app: TestApp,
  classId: string,
  hoursAhead: number,
  opts: { capacity?: number; spotsTaken?: number; timezone?: string } = {},
) {
  return createClassInstance(app, classId, new Date(app.clock.now().getTime() + hoursAhead * 3600_000), opts);
}

/** Another client of the world's reseller, holding the world's pass. */
export async function anotherClient(app: TestApp, world: BookingWorld, email = 'grace@example.com') {
  const issued = await issuePass(app, world.reseller, world.passId, { first_name: 'Grace', last_name: 'Hopper', email });
  return { id: issued.client_id, issuedPassId: issued.id };
}

export const book = {
  spa: (app: TestApp, world: BookingWorld, body: Record<string, unknown>, idempotencyKey?: string) =>
    v3(app, '/bookings/spa', { key: world.reseller.key, body, idempotencyKey }),
  cls: (app: TestApp, world: BookingWorld, body: Record<string, unknown>, idempotencyKey?: string) =>
    v3(app, '/bookings/class', { key: world.reseller.key, body, idempotencyKey }),
};
