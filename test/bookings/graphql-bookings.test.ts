import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectGraphQLError, expectUnchanged } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { catalogueSettled, createClass, createProvider } from '../support/catalog.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, walletLedger } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';

// The GraphQL surface of bookings calls the use cases REST calls (src/modules/bookings/bookings.rest.ts):
// the same outcomes, and the same catalogue codes as typed members of each mutation's result union.
const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const BOOKING = `id status type message serviceName providerName date time scheduledFor createdAt
  client { id firstName } provider { id name } classInstanceId serviceIds visitsDeducted creditsCharged copayAmount currency
  refund { policy creditsRefunded visitsRestored copayRefunded currency }
  rescheduledFrom { id status } rescheduledTo { id status } statusHistory { status at }`;
const ERRORS = '... on Error { code message } ... on InputError { param } ... on NotFoundError { param }';

const BOOK_SPA = `mutation($input: BookSpaInput!) { bookSpa(input: $input) { __typename
  ... on SpaBookingInitiation { copayRequired status message sessionId copayAmount copayCredits currency sessionExpiresAt
    date time scheduledFor serviceName providerName createdAt booking { ${BOOKING} } }
  ${ERRORS} } }`;
const CONFIRM_SPA = `mutation($input: ConfirmSpaBookingInput!) { confirmSpaBooking(input: $input) { __typename
  ... on BookingPayload { booking { ${BOOKING} } } ${ERRORS} } }`;
const BOOK_CLASS = `mutation($input: BookClassInput!) { bookClass(input: $input) { __typename
  ... on ClassBookingInitiation { copayRequired additionalVisitsRequired status message visitsDeducted sessionId sessionExpiresAt
    copayOptions { id name maxVisits visitDurationDays clientCopayAmount currency } visitsUsed maxVisits costPerVisit currency
    classInstanceId className providerName date time scheduledFor createdAt booking { ${BOOKING} } }
  ${ERRORS} } }`;
const CONFIRM_CLASS = `mutation($input: ConfirmClassBookingInput!) { confirmClassBooking(input: $input) { __typename
  ... on BookingPayload { booking { ${BOOKING} } } ${ERRORS} } }`;
const CANCEL = `mutation($input: CancelBookingInput!) { cancelBooking(input: $input) { __typename
  ... on BookingPayload { booking { ${BOOKING} } } ${ERRORS} } }`;
const RESCHEDULE = `mutation($input: RescheduleBookingInput!) { rescheduleBooking(input: $input) { __typename
  ... on BookingPayload { booking { ${BOOKING} } } ${ERRORS} } }`;

type Result = Record<string, any>;
/** Runs a mutation; the answer is its one field's value (HTTP 200, no top-level errors). */
async function mutate(query: string, input: Record<string, unknown>, idempotencyKey?: string): Promise<Result> {
  const res = await gql(app, w.reseller.key, query, { input }, { idempotencyKey });
  expect(res.status, res.text).toBe(200);
  expect(res.body.errors, res.text).toBeUndefined();
  return Object.values(res.body.data as Record<string, Result>)[0];
}

const bookSpa = (extra: Record<string, unknown> = {}) =>
  mutate(BOOK_SPA, { date: '2026-03-10', time: '10:00', spaId: w.spa.id, serviceIds: [w.spa.massage], clientId: w.client.id, ...extra });
const bookClass = (classInstanceId: string, extra: Record<string, unknown> = {}, idempotencyKey?: string) =>
  mutate(BOOK_CLASS, { classInstanceId, clientId: w.client.id, ...extra }, idempotencyKey);

/** The typed error a mutation answered, and that nothing was written. */
async function expectRefused(run: () => Promise<Result>, typename: string, code: string, param?: string) {
  const before = await dbState(app);
  const result = await run();
  expect(result).toMatchObject({ __typename: typename, code, ...(param !== undefined ? { param } : {}) });
  expect(typeof result.message).toBe('string');
  await expectUnchanged(app, before);
}

/** The V3 booking as REST reads it, for comparing with the GraphQL one. */
async function restBooking(id: string) {
  const res = await v3(app, `/bookings/${id}`, { key: w.reseller.key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('mutation bookSpa', () => {
  it('covered › booked now, credits debited; the Booking has the V3 booking’s values', async () => {
    const wallet = await walletLedger(app, w.client.id);
    const outbox = await lastOutboxId(app);
    const result = await bookSpa({ serviceIds: [w.spa.massage, w.spa.sauna], firstName: 'ADA' });
    expect(result).toMatchObject({
      __typename: 'SpaBookingInitiation',
      copayRequired: false,
      status: 'PENDING',
      message: 'Spa appointment booked',
      sessionId: null,
      copayAmount: null,
      copayCredits: null,
      sessionExpiresAt: null,
      currency: 'EUR',
      date: '2026-03-10',
      time: '10:00',
      scheduledFor: '2026-03-10T09:00:00Z',
      createdAt: '2026-03-02T08:00:00Z',
      serviceName: 'Massage, Sauna',
      providerName: 'Silver Spa',
    });
    const { booking } = result;
    expect(booking).toEqual({
      id: expect.stringMatching(/^booking_/),
      status: 'PENDING',
      type: 'SPA',
      message: expect.any(String),
      serviceName: 'Massage, Sauna',
      providerName: 'Silver Spa',
      date: '2026-03-10',
      time: '10:00',
      scheduledFor: '2026-03-10T09:00:00Z',
      createdAt: '2026-03-02T08:00:00Z',
      client: { id: w.client.id, firstName: 'Ada' },
      provider: { id: w.spa.id, name: 'Silver Spa' },
      classInstanceId: null,
      serviceIds: [w.spa.massage, w.spa.sauna],
      visitsDeducted: 0,
      creditsCharged: 40,
      copayAmount: null,
      currency: 'EUR',
      refund: null,
      rescheduledFrom: null,
      rescheduledTo: null,
      statusHistory: [{ status: 'PENDING', at: '2026-03-02T08:00:00Z' }],
    });
    const rest = await restBooking(booking.id);
    expect(rest).toMatchObject({
      status: booking.status,
      type: 'spa',
      message: booking.message,
      service_name: booking.serviceName,
      date: booking.date,
      time: booking.time,
      credits_charged: booking.creditsCharged,
      visits_deducted: booking.visitsDeducted,
      service_ids: booking.serviceIds,
      scheduled_for: new Date(booking.scheduledFor).getTime() / 1000,
    });
    expect((await walletLedger(app, w.client.id)).balance).toBe(wallet.balance - 40);
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => e.payload.type)).toEqual(['booking.created']);
    expect(events[0].payload.data.object).toEqual(rest);
  });

  it('the slot taken › ConflictError slot_unavailable, nothing written', async () => {
    await expectRefused(() => bookSpa({ time: '10:30', serviceIds: [w.spa.sauna] }), 'ConflictError', 'slot_unavailable');
  });

  it('neither covered nor priced › PermissionError provider_not_covered, nothing written', async () => {
    await expectRefused(
      () => bookSpa({ spaId: w.closedSpa.id, serviceIds: [w.closedSpa.service] }),
      'PermissionError',
      'provider_not_covered',
    );
  });

  it('not enough credits › InputError insufficient_credits, nothing written', async () => {
    const client = await anotherClient(app, w, 'poor-spa@example.com');
    await app.sql('update client set credit_balance = 0 where id = ?', [client.id]);
    await app.sql('delete from credit_transaction where client_id = ?', [client.id]);
    await expectRefused(() => bookSpa({ clientId: client.id, time: '15:00' }), 'InputError', 'insufficient_credits');
  });

  it.each([
    { situation: 'a time off the quarter hour', extra: { time: '10:05' }, param: 'time' },
    { situation: 'a time outside opening hours', extra: { time: '07:00' }, param: 'time' },
    { situation: 'a day in the past', extra: { date: '2026-03-01' }, param: 'time' },
    { situation: 'no services', extra: { serviceIds: [] }, param: 'serviceIds' },
    { situation: 'neither clientId nor userPassId', extra: { clientId: null }, param: 'clientId' },
    { situation: 'a name that is not the client’s', extra: { lastName: 'Byron' }, param: 'lastName' },
  ])('$situation › InputError validation_error naming $param, nothing written', async ({ extra, param }) => {
    await expectRefused(() => bookSpa({ time: '12:00', ...extra }), 'InputError', 'validation_error', param);
  });

  it('an unknown spa, issued pass or client, or another reseller’s client › NotFoundError naming the field', async () => {
    await expectRefused(() => bookSpa({ spaId: 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 'NotFoundError', 'resource_not_found', 'spaId');
    await expectRefused(
      () => bookSpa({ clientId: null, userPassId: 'ipass_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      'NotFoundError',
      'resource_not_found',
      'userPassId',
    );
    const other = await createBookingWorld(app);
    await expectRefused(() => bookSpa({ clientId: other.client.id, time: '12:00' }), 'NotFoundError', 'resource_not_found', 'clientId');
  });

  it('a date that is no calendar day › refused before execution (Date scalar), nothing written', async () => {
    const before = await dbState(app);
    const res = await gql(app, w.reseller.key, BOOK_SPA, {
      input: { date: '2026-02-30', time: '10:00', spaId: w.spa.id, serviceIds: [w.spa.massage], clientId: w.client.id },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions?.code).toBe('validation_error');
    await expectUnchanged(app, before);
  });
});

describe('mutation bookSpa › co-pay session, then confirmSpaBooking', () => {
  it('not covered but priced › a session; its confirm debits the co-pay and books; a second confirm is ConflictError', async () => {
    const ledger = await businessLedger(app, w.reseller.id);
    const session = await bookSpa({ spaId: w.copaySpa.id, serviceIds: [w.copaySpa.massage, w.copaySpa.sauna], time: '12:00' });
    expect(session).toMatchObject({
      __typename: 'SpaBookingInitiation',
      copayRequired: true,
      status: 'AWAITING_COPAY',
      booking: null,
      sessionId: expect.stringMatching(/^sess_/),
      copayAmount: 6000,
      copayCredits: 40,
      currency: 'EUR',
      sessionExpiresAt: '2026-03-03T08:00:00Z',
      providerName: 'Gold Spa',
      date: '2026-03-10',
      time: '12:00',
    });
    expect(await businessLedger(app, w.reseller.id)).toEqual(ledger);

    const confirmed = await mutate(CONFIRM_SPA, { sessionId: session.sessionId });
    expect(confirmed).toMatchObject({
      __typename: 'BookingPayload',
      booking: {
        status: 'PENDING',
        type: 'SPA',
        copayAmount: 6000,
        creditsCharged: 0,
        date: '2026-03-10',
        time: '12:00',
        provider: { id: w.copaySpa.id },
      },
    });
    const after = await businessLedger(app, w.reseller.id);
    expect(after.balance).toBe(ledger.balance - 6000);
    expect(after.ledgerSum).toBe(after.balance);

    await expectRefused(() => mutate(CONFIRM_SPA, { sessionId: session.sessionId }), 'ConflictError', 'session_already_confirmed');
  });

  it('a session older than 24 hours › UnprocessableError session_expired, nothing written', async () => {
    const session = await bookSpa({ spaId: w.copaySpa.id, serviceIds: [w.copaySpa.sauna], time: '15:00' });
    app.clock.advance(24 * 3600_000);
    await expectRefused(() => mutate(CONFIRM_SPA, { sessionId: session.sessionId }), 'UnprocessableError', 'session_expired');
  });

  it('too little balance › UnprocessableError insufficient_balance, nothing written', async () => {
    const session = await bookSpa({ spaId: w.copaySpa.id, serviceIds: [w.copaySpa.sauna], time: '16:00' });
    const { balance } = await businessLedger(app, w.reseller.id);
    await app.sql('update business_account set balance = 100 where reseller_id = ?', [w.reseller.id]);
    try {
      await expectRefused(() => mutate(CONFIRM_SPA, { sessionId: session.sessionId }), 'UnprocessableError', 'insufficient_balance');
    } finally {
      await app.sql('update business_account set balance = ? where reseller_id = ?', [balance, w.reseller.id]);
    }
  });

  it('an unknown, malformed or class session › NotFoundError', async () => {
    await expectRefused(() => mutate(CONFIRM_SPA, { sessionId: 'sess_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 'NotFoundError', 'resource_not_found');
    await expectRefused(() => mutate(CONFIRM_SPA, { sessionId: 'nope' }), 'NotFoundError', 'resource_not_found');
  });
});

describe('mutation bookClass', () => {
  it('covered › booked now with one visit; the same client again › ConflictError already_booked', async () => {
    const instance = await instanceIn(app, w.gym.classId, 50, { capacity: 5 });
    const result = await bookClass(instance.id, { firstName: 'ada' });
    expect(result).toMatchObject({
      __typename: 'ClassBookingInitiation',
      copayRequired: false,
      additionalVisitsRequired: false,
      status: 'PENDING',
      message: 'Class booked',
      visitsDeducted: 1,
      sessionId: null,
      sessionExpiresAt: null,
      copayOptions: null,
      visitsUsed: null,
      maxVisits: null,
      costPerVisit: null,
      classInstanceId: instance.id,
      className: 'Morning Flow',
      providerName: 'Silver Gym',
      date: '2026-03-04',
      time: '11:00',
      scheduledFor: '2026-03-04T10:00:00Z',
      currency: 'EUR',
      booking: {
        status: 'PENDING',
        type: 'CLASS',
        classInstanceId: instance.id,
        serviceIds: [],
        visitsDeducted: 1,
        creditsCharged: 0,
        provider: { id: w.gym.id },
      },
    });
    await expectRefused(
      () => bookClass(instance.id, { clientId: null, userPassId: w.client.issuedPassId }),
      'ConflictError',
      'already_booked',
    );
  });

  it('a full instance › ConflictError class_full; a started one › ConflictError class_not_bookable; nothing written', async () => {
    const full = await instanceIn(app, w.gym.classId, 30, { capacity: 3, spotsTaken: 3 });
    await expectRefused(() => bookClass(full.id), 'ConflictError', 'class_full');
    const started = await instanceIn(app, w.gym.classId, -1);
    await expectRefused(() => bookClass(started.id), 'ConflictError', 'class_not_bookable');
  });

  it('a tier not covered and no co-pay option › PermissionError provider_not_covered, nothing written', async () => {
    const gym = await createProvider(app, { category: 'GYM', tier: 'PLATINUM', name: 'Platinum Gym' });
    const cls = await createClass(app, gym.id, w.categoryId);
    const instance = await instanceIn(app, cls.id, 30);
    await expectRefused(() => bookClass(instance.id), 'PermissionError', 'provider_not_covered');
  });

  it('bad input › InputError or NotFoundError naming the camelCase field, nothing written', async () => {
    const instance = await instanceIn(app, w.gym.classId, 20);
    await expectRefused(() => bookClass(instance.id, { clientId: null }), 'InputError', 'validation_error', 'clientId');
    await expectRefused(() => bookClass('ci_01JZZZZZZZZZZZZZZZZZZZZZZZ'), 'NotFoundError', 'resource_not_found', 'classInstanceId');
  });

  it('visits used up › a session with the counters; confirmClassBooking buys visits (cost × n) and books', async () => {
    const client = await anotherClient(app, w, 'gql-visits@example.com');
    await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [client.issuedPassId]);
    await app.sql(
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
      values ('vtxn_01JTESTGQL000000000000000', ?, ?, ?, 'GYM', '2026-03', 8, 'BOOKING', now())`,
      [w.reseller.id, client.id, client.issuedPassId],
    );
    const instance = await instanceIn(app, w.gym.classId, 72);
    const session = await bookClass(instance.id, { clientId: client.id });
    expect(session).toMatchObject({
      copayRequired: false,
      additionalVisitsRequired: true,
      status: 'AWAITING_VISITS',
      booking: null,
      visitsDeducted: null,
      visitsUsed: 8,
      maxVisits: 8,
      costPerVisit: 1000,
      copayOptions: null,
      sessionExpiresAt: '2026-03-03T08:00:00Z',
      sessionId: expect.stringMatching(/^sess_/),
    });

    // The other session kind's field, or a bad count: InputError naming it, nothing written.
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: session.sessionId, copayPackageId: w.copayGym.optionId }),
      'InputError',
      'validation_error',
      'copayPackageId',
    );
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: session.sessionId, numberOfVisits: 51, duration: 'MONTHLY' }),
      'InputError',
      'validation_error',
      'numberOfVisits',
    );
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: session.sessionId, numberOfVisits: 2 }),
      'InputError',
      'validation_error',
      'duration',
    );

    const ledger = await businessLedger(app, w.reseller.id);
    const done = await mutate(CONFIRM_CLASS, {
      sessionId: session.sessionId,
      numberOfVisits: 3,
      duration: 'MONTHLY',
      copayPackageId: null,
    });
    expect(done).toMatchObject({
      __typename: 'BookingPayload',
      booking: { status: 'PENDING', type: 'CLASS', visitsDeducted: 1, classInstanceId: instance.id, client: { id: client.id } },
    });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 3000);
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: session.sessionId, numberOfVisits: 3, duration: 'MONTHLY' }),
      'ConflictError',
      'session_already_confirmed',
    );
  });

  it('tier not covered › the provider’s co-pay options; confirmClassBooking with one debits it and books', async () => {
    const client = await anotherClient(app, w, 'gql-copay@example.com');
    const instance = await instanceIn(app, w.copayGym.classId, 30);
    const session = await bookClass(instance.id, { clientId: client.id });
    expect(session).toMatchObject({
      copayRequired: true,
      additionalVisitsRequired: false,
      status: 'AWAITING_COPAY',
      providerName: 'Gold Gym',
      booking: null,
      copayOptions: [
        { id: w.copayGym.optionId, name: '3 visits', maxVisits: 3, visitDurationDays: 30, clientCopayAmount: 2500, currency: 'EUR' },
      ],
      visitsUsed: null,
      maxVisits: null,
      costPerVisit: null,
    });
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: session.sessionId, copayPackageId: 'copay_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      'InputError',
      'validation_error',
      'copayPackageId',
    );
    const ledger = await businessLedger(app, w.reseller.id);
    const done = await mutate(CONFIRM_CLASS, { sessionId: session.sessionId, copayPackageId: w.copayGym.optionId });
    expect(done.booking).toMatchObject({ status: 'PENDING', provider: { id: w.copayGym.id } });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 2500);
  });

  it('a session older than 24 hours › UnprocessableError session_expired; too little balance › insufficient_balance', async () => {
    const client = await anotherClient(app, w, 'gql-copay-late@example.com');
    const first = await bookClass((await instanceIn(app, w.copayGym.classId, 60)).id, { clientId: client.id });
    const second = await bookClass((await instanceIn(app, w.copayGym.classId, 70)).id, { clientId: client.id });
    const { balance } = await businessLedger(app, w.reseller.id);
    await app.sql('update business_account set balance = 100 where reseller_id = ?', [w.reseller.id]);
    try {
      await expectRefused(
        () => mutate(CONFIRM_CLASS, { sessionId: second.sessionId, copayPackageId: w.copayGym.optionId }),
        'UnprocessableError',
        'insufficient_balance',
      );
    } finally {
      await app.sql('update business_account set balance = ? where reseller_id = ?', [balance, w.reseller.id]);
    }
    app.clock.advance(24 * 3600_000 + 1000);
    await expectRefused(
      () => mutate(CONFIRM_CLASS, { sessionId: first.sessionId, copayPackageId: w.copayGym.optionId }),
      'UnprocessableError',
      'session_expired',
    );
  });
});

describe('Idempotency-Key on bookClass', () => {
  it('a retry with the same key replays the first answer, books once; the key with another input › 409 idempotency_key_reused', async () => {
    const instance = await instanceIn(app, w.gym.classId, 55);
    const input = { classInstanceId: instance.id, clientId: w.client.id };
    const other = await instanceIn(app, w.gym.classId, 56);
    const first = await gql(app, w.reseller.key, BOOK_CLASS, { input }, { idempotencyKey: 'gql-book-class-1' });
    expect(first.body.data.bookClass).toMatchObject({ __typename: 'ClassBookingInitiation', status: 'PENDING' });
    expect(first.headers.get('x-idempotent-replayed')).toBeNull();
    const before = await dbState(app);
    const replay = await gql(app, w.reseller.key, BOOK_CLASS, { input }, { idempotencyKey: 'gql-book-class-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    await expectUnchanged(app, before);
    const rows = await app.sql('select id from booking where class_instance_id = ?', [instance.id]);
    expect(rows).toHaveLength(1);

    const reused = await gql(
      app,
      w.reseller.key,
      BOOK_CLASS,
      { input: { ...input, classInstanceId: other.id } },
      { idempotencyKey: 'gql-book-class-1' },
    );
    expect(reused.status).toBe(409);
    expectGraphQLError(reused, 'idempotency_key_reused');
    await expectUnchanged(app, before);
  });
});

describe('mutation cancelBooking', () => {
  it('more than 24 h ahead › FULL refund; again › ConflictError already_cancelled, nothing written', async () => {
    const booked = await bookSpa({ time: '13:00', serviceIds: [w.spa.sauna] });
    const wallet = await walletLedger(app, w.client.id);
    const outbox = await lastOutboxId(app);
    const cancelled = await mutate(CANCEL, { bookingId: booked.booking.id });
    expect(cancelled.booking).toMatchObject({
      id: booked.booking.id,
      status: 'CANCELLED',
      refund: { policy: 'FULL', creditsRefunded: 10, visitsRestored: 0, copayRefunded: 0, currency: 'EUR' },
      statusHistory: [{ status: 'PENDING' }, { status: 'CANCELLED' }],
    });
    expect((await walletLedger(app, w.client.id)).balance).toBe(wallet.balance + 10);
    expect((await outboxSince(app, outbox)).map((e) => e.payload.type)).toEqual(['booking.cancelled']);
    await expectRefused(() => mutate(CANCEL, { bookingId: booked.booking.id }), 'ConflictError', 'already_cancelled');
  });

  it('an unknown booking, or another reseller’s › NotFoundError', async () => {
    await expectRefused(() => mutate(CANCEL, { bookingId: 'booking_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 'NotFoundError', 'resource_not_found');
    const other = await createBookingWorld(app);
    const theirs = await book.spa(app, other, {
      date: '2026-03-11',
      time: '10:00',
      spa_id: other.spa.id,
      service_ids: [other.spa.sauna],
      client_id: other.client.id,
    });
    await expectRefused(() => mutate(CANCEL, { bookingId: theirs.body.booking_id }), 'NotFoundError', 'resource_not_found');
  });

  it('with an Idempotency-Key › the key covers the operation, as for every mutation: the same key replays the cancel', async () => {
    const booked = await bookSpa({ time: '14:00', serviceIds: [w.spa.sauna] });
    const first = await gql(app, w.reseller.key, CANCEL, { input: { bookingId: booked.booking.id } }, { idempotencyKey: 'gql-cancel-1' });
    expect(first.body.data.cancelBooking.booking.status).toBe('CANCELLED');
    const replay = await gql(app, w.reseller.key, CANCEL, { input: { bookingId: booked.booking.id } }, { idempotencyKey: 'gql-cancel-1' });
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // Without the key a repeat runs again, as REST's cancel always does.
    expect(await mutate(CANCEL, { bookingId: booked.booking.id })).toMatchObject({
      __typename: 'ConflictError',
      code: 'already_cancelled',
    });
  });
});

describe('mutation rescheduleBooking', () => {
  it('a spa appointment › a new PENDING booking with rescheduledFrom; the old one is RESCHEDULED with rescheduledTo', async () => {
    const booked = await bookSpa({ date: '2026-03-12', time: '10:00', serviceIds: [w.spa.sauna] });
    const wallet = await walletLedger(app, w.client.id);
    const moved = await mutate(RESCHEDULE, { bookingId: booked.booking.id, date: '2026-03-12', time: '11:00' });
    expect(moved.booking).toMatchObject({
      status: 'PENDING',
      date: '2026-03-12',
      time: '11:00',
      creditsCharged: 10,
      rescheduledTo: null,
      rescheduledFrom: { id: booked.booking.id, status: 'RESCHEDULED' },
    });
    expect(moved.booking.id).not.toBe(booked.booking.id);
    expect(await walletLedger(app, w.client.id)).toEqual(wallet);
    const old = await gql(
      app,
      w.reseller.key,
      `query($id: ID!) { booking(id: $id) { status rescheduledTo { id } statusHistory { status } } }`,
      { id: booked.booking.id },
    );
    expect(old.body.data.booking).toEqual({
      status: 'RESCHEDULED',
      rescheduledTo: { id: moved.booking.id },
      statusHistory: [{ status: 'PENDING' }, { status: 'RESCHEDULED' }],
    });
  });

  it('a class booking › to another instance at the same provider', async () => {
    const from = await instanceIn(app, w.gym.classId, 80);
    const to = await instanceIn(app, w.gym.classId, 90);
    const booked = await bookClass(from.id);
    const moved = await mutate(RESCHEDULE, { bookingId: booked.booking.id, classInstanceId: to.id });
    expect(moved.booking).toMatchObject({
      status: 'PENDING',
      type: 'CLASS',
      classInstanceId: to.id,
      visitsDeducted: 1,
      rescheduledFrom: { id: booked.booking.id },
    });
  });

  it('refusals › typed errors naming camelCase fields, nothing written', async () => {
    // Another client: the world's client has spent its credits by now.
    const client = await anotherClient(app, w, 'gql-reschedule@example.com');
    const booked = await bookSpa({ date: '2026-03-13', time: '10:00', serviceIds: [w.spa.sauna], clientId: client.id });
    await bookSpa({ date: '2026-03-13', time: '12:00', serviceIds: [w.spa.massage], clientId: client.id });
    await expectRefused(
      () => mutate(RESCHEDULE, { bookingId: booked.booking.id, classInstanceId: 'ci_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      'InputError',
      'validation_error',
      'classInstanceId',
    );
    await expectRefused(
      () => mutate(RESCHEDULE, { bookingId: booked.booking.id, date: '2026-03-13' }),
      'InputError',
      'validation_error',
      'time',
    );
    await expectRefused(
      () => mutate(RESCHEDULE, { bookingId: booked.booking.id, date: '2026-03-13', time: '12:30' }),
      'ConflictError',
      'slot_unavailable',
    );
    await mutate(CANCEL, { bookingId: booked.booking.id });
    await expectRefused(
      () => mutate(RESCHEDULE, { bookingId: booked.booking.id, date: '2026-03-14', time: '10:00' }),
      'ConflictError',
      'not_reschedulable',
    );
    await expectRefused(
      () => mutate(RESCHEDULE, { bookingId: 'booking_01JZZZZZZZZZZZZZZZZZZZZZZZ', date: '2026-03-14', time: '10:00' }),
      'NotFoundError',
      'resource_not_found',
    );
  });
});

describe('query booking(id:) and node(id:)', () => {
  it('answer the booking; null for another reseller’s or an unknown id', async () => {
    const client = await anotherClient(app, w, 'gql-read@example.com');
    const booked = await bookSpa({ date: '2026-03-15', time: '10:00', serviceIds: [w.spa.sauna], clientId: client.id });
    const query = `query($id: ID!) { booking(id: $id) { id status } node(id: $id) { __typename id ... on Booking { serviceName client { id } } } }`;
    const own = await gql(app, w.reseller.key, query, { id: booked.booking.id });
    expect(own.body).toEqual({
      data: {
        booking: { id: booked.booking.id, status: 'PENDING' },
        node: { __typename: 'Booking', id: booked.booking.id, serviceName: 'Sauna', client: { id: client.id } },
      },
    });
    const other = await createBookingWorld(app);
    expect((await gql(app, other.reseller.key, query, { id: booked.booking.id })).body).toEqual({ data: { booking: null, node: null } });
    expect((await gql(app, w.reseller.key, query, { id: 'booking_01JZZZZZZZZZZZZZZZZZZZZZZZ' })).body).toEqual({
      data: { booking: null, node: null },
    });
    expect((await gql(app, w.reseller.key, query, { id: 'nope' })).body).toEqual({ data: { booking: null, node: null } });
  });
});

describe('Client.bookings', () => {
  let world: BookingWorld;
  const ids: string[] = [];
  const BOOKINGS = `query($id: ID!, $status: String, $type: String, $first: Int, $after: String, $last: Int, $before: String) {
    client(id: $id) { bookings(status: $status, type: $type, first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id status type } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`;
  const list = async (variables: Record<string, unknown> = {}) => {
    const res = await gql(app, world.reseller.key, BOOKINGS, { id: world.client.id, ...variables });
    expect(res.body.errors, res.text).toBeUndefined();
    return res.body.data.client.bookings as { edges: { cursor: string; node: { id: string } }[]; pageInfo: Record<string, unknown> };
  };
  const idsOf = (c: { edges: { node: { id: string } }[] }) => c.edges.map((e) => e.node.id);

  beforeAll(async () => {
    world = await createBookingWorld(app);
    for (const hours of [20, 30, 40]) {
      const instance = await instanceIn(app, world.gym.classId, hours);
      ids.push((await book.cls(app, world, { class_instance_id: instance.id, client_id: world.client.id })).body.booking_id);
    }
    ids.push(
      (
        await book.spa(app, world, {
          date: '2026-03-10',
          time: '10:00',
          spa_id: world.spa.id,
          service_ids: [world.spa.sauna],
          client_id: world.client.id,
        })
      ).body.booking_id,
    );
    await v3(app, `/bookings/${ids[0]}/cancel`, { key: world.reseller.key, method: 'POST' });
  });

  it('newest first, as REST lists them', async () => {
    const all = await list();
    expect(idsOf(all)).toEqual([...ids].reverse());
    const rest = await v3(app, `/clients/${world.client.id}/bookings`, { key: world.reseller.key });
    expect(idsOf(all)).toEqual(rest.body.data.map((b: { id: string }) => b.id));
    expect(all.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: ids[3], endCursor: ids[0] });
  });

  it('status and type filters in any case', async () => {
    expect(idsOf(await list({ status: 'cancelled' }))).toEqual([ids[0]]);
    expect(idsOf(await list({ status: 'Pending', type: 'CLASS' }))).toEqual([ids[2], ids[1]]);
    expect(idsOf(await list({ type: 'spa' }))).toEqual([ids[3]]);
  });

  it('pages forward with first/after and backward with last/before, filters kept', async () => {
    const first = await list({ first: 2 });
    expect(idsOf(first)).toEqual([ids[3], ids[2]]);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, endCursor: ids[2] });
    const second = await list({ first: 2, after: first.pageInfo.endCursor });
    expect(idsOf(second)).toEqual([ids[1], ids[0]]);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const back = await list({ last: 2, before: ids[1] });
    expect(idsOf(back)).toEqual([ids[3], ids[2]]);
    expect(idsOf(await list({ last: 1 }))).toEqual([ids[0]]);
    expect(idsOf(await list({ type: 'class', first: 1, after: ids[2] }))).toEqual([ids[1]]);
  });

  it('bad filters or a cursor of another list › top-level errors with the REST codes', async () => {
    for (const [variables, code, param] of [
      [{ status: 'done' }, 'validation_error', 'status'],
      [{ type: 'gym' }, 'validation_error', 'type'],
      [{ first: 101 }, 'validation_error', 'first'],
      [{ after: 'booking_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, 'invalid_cursor', 'after'],
      // A booking of this client outside the filter is not an id of the filtered list, as in REST.
      [{ status: 'pending', after: ids[0] }, 'invalid_cursor', 'after'],
    ] as const) {
      const res = await gql(app, world.reseller.key, BOOKINGS, { id: world.client.id, ...variables });
      expect(res.body.data, JSON.stringify(variables)).toEqual({ client: null });
      expect(res.body.errors?.[0].extensions, JSON.stringify(variables)).toMatchObject({ code, param });
    }
  });
});

describe('Client.bookings over a page of clients', () => {
  /** The reply and its SQL statements, the cached API key look-up left out (test/graphql/child-connections.test.ts). */
  async function counted(key: string, query: string, variables: Record<string, unknown>): Promise<{ reply: Reply; statements: number }> {
    app.queries!.reset();
    const reply = await gql(app, key, query, variables);
    return { reply, statements: app.queries!.ownCount };
  }

  it('costs the same number of statements for 2 clients as for 6, first pages and a cursor alike', async () => {
    const world = await createBookingWorld(app);
    const clients: { id: string; bookings: string[] }[] = [];
    for (let i = 0; i < 6; i++) {
      const client = i === 0 ? world.client : await anotherClient(app, world, `page-${i}@example.com`);
      const bookings: string[] = [];
      for (const hours of [20 + i, 40 + i]) {
        const instance = await instanceIn(app, world.gym.classId, hours);
        const res = await book.cls(app, world, { class_instance_id: instance.id, client_id: client.id });
        expect(res.status, res.text).toBe(201);
        bookings.unshift(res.body.booking_id);
      }
      clients.push({ id: client.id, bookings });
    }
    const PAGE = `query($ids: [ID!]!, $after: String) { nodes(ids: $ids) { ... on Client { id
      bookings(first: 1, after: $after, type: "class") { edges { node { id provider { name } client { id } } } pageInfo { hasNextPage } } } } }`;

    // Once, so the provider is kept by the process (src/platform/catalogue-cache.ts) for both counts
    // below, once its creation is heard.
    await catalogueSettled(app);
    await counted(world.reseller.key, PAGE, { ids: [clients[0].id] });
    const firstPages: number[] = [];
    for (const count of [2, 6]) {
      const { reply, statements } = await counted(world.reseller.key, PAGE, { ids: clients.slice(0, count).map((c) => c.id) });
      expect(reply.body.errors, reply.text).toBeUndefined();
      clients.slice(0, count).forEach((client, i) => {
        expect(reply.body.data.nodes[i].bookings).toEqual({
          edges: [{ node: { id: client.bookings[0], provider: { name: 'Silver Gym' }, client: { id: client.id } } }],
          pageInfo: { hasNextPage: true },
        });
      });
      firstPages.push(statements);
    }
    // The clients, one page of bookings for all of them (their provider kept).
    expect(firstPages).toEqual([2, 2]);

    const cursorPages: number[] = [];
    for (const count of [2, 6]) {
      const owner = clients[count - 1];
      const { reply, statements } = await counted(world.reseller.key, PAGE, {
        ids: clients.slice(0, count).map((c) => c.id),
        after: owner.bookings[0],
      });
      const nodes = reply.body.data.nodes as ({ bookings: { edges: { node: { id: string } }[] } } | null)[];
      expect(nodes.slice(0, count - 1)).toEqual(Array(count - 1).fill(null));
      expect(nodes[count - 1]!.bookings.edges.map((e) => e.node.id)).toEqual([owner.bookings[1]]);
      for (const error of reply.body.errors) expect(error.extensions).toMatchObject({ code: 'invalid_cursor', param: 'after' });
      cursorPages.push(statements);
    }
    // The clients, the cursor's owner, then REST's own list of that client (the client, the cursor, the page).
    expect(cursorPages).toEqual([5, 5]);
  });
});
