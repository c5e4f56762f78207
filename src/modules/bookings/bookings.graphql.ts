import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { childConnections, connectionCost, nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { onceForEvent, subscribeToEvents } from '../../graphql/subscriptions.ts';
import { runMutation, takesLookupToken, forClientSession } from '../../graphql/use-case.ts';
import type { EventType, LiveEvent } from '../events/index.ts';
import type { ConnectionArgs } from '../../platform/pagination.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import { CopayOptionRef, ProviderRef } from '../providers/providers.graphql.ts';
import { bookClass } from './book-class.ts';
import { bookSpa } from './book-spa.ts';
import { cancelBooking } from './cancel-booking.ts';
import { confirmClassBooking, confirmSpaBooking } from './confirm-session.ts';
import { rescheduleBooking } from './reschedule-booking.ts';
import { bookingPagesOfClients, clientWithFirstBookings } from './bookings.service.ts';
import { registerReadAlong, withPagesReadAlong } from '../../graphql/read-along.ts';
import { BookingSchema, bookingMessages, bookingStatuses, type Booking, type Refund, type StatusChange } from './bookings.entity.ts';
import { initiationStatuses, type Initiation } from './initiation.ts';

// The GraphQL surface of bookings (docs/architecture.md "Layout"): every mutation calls the use case its REST
// route calls (bookings.rest.ts) with the same V3 input, camelCase fields mapped to snake_case, so
// both surfaces answer the same catalogue codes; the types read the use cases' results (the
// booking, the initiation of initiation.ts), as bookings.presenter.ts does for REST.

const BookingStatusEnum = builder.enumType('BookingStatus', {
  description: 'Where a booking is: PENDING until the provider confirms it; then CONFIRMED, COMPLETED, CANCELLED or RESCHEDULED.',
  values: bookingStatuses,
});

const BookingTypeEnum = builder.enumType('BookingType', {
  description: 'What was booked: a spa appointment or a class (V3 `spa` / `class`).',
  values: {
    SPA: { value: 'spa' as const, description: 'A spa appointment of one or more services.' },
    CLASS: { value: 'class' as const, description: 'A place in a class instance.' },
  },
});

const BookingInitiationStatusEnum = builder.enumType('BookingInitiationStatus', {
  description: 'The status of the booking made now (PENDING), or of the session opened instead: AWAITING_COPAY or AWAITING_VISITS.',
  values: initiationStatuses,
});

const RefundPolicyEnum = builder.enumType('RefundPolicy', {
  description: "Which part of the provider's cancellation policy applied.",
  values: {
    FULL: { description: 'Cancelled before the free-cancellation window closed: everything came back.' },
    LATE: { description: "Cancelled after it: the policy's share of credits and co-pay, no visit." },
  },
});

export const ExtraVisitsDurationEnum = builder.enumType('ExtraVisitsDuration', {
  description: 'How long extra visits bought at a confirm stay usable.',
  values: {
    MONTHLY: { description: "Until the month's visit counters start again." },
    ANNUALLY: { description: 'For twelve months.' },
  },
});

const RefundRef = builder.objectRef<Refund>('Refund').implement({
  description: "What a cancellation gave back, by the provider's cancellation policy.",
  fields: (t) => ({
    policy: t.field({
      type: RefundPolicyEnum,
      description: 'FULL: cancelled before the free-cancellation window closed; LATE: after it.',
      resolve: (r) => r.policy,
    }),
    creditsRefunded: t.int({ description: "Credits put back in the client's wallet.", resolve: (r) => r.credits_refunded }),
    visitsRestored: t.int({
      description: 'Visits given back to the pass or the entitlement they came from.',
      resolve: (r) => r.visits_restored,
    }),
    copayRefunded: t.int({
      description: 'Co-pay credited back to the business account, minor units of `currency`.',
      resolve: (r) => r.copay_refunded,
    }),
    currency: t.string({ description: 'ISO-4217 currency code of `copayRefunded`.', resolve: (r) => r.currency }),
  }),
});

const StatusChangeRef = builder.objectRef<StatusChange>('BookingStatusChange').implement({
  description: 'One status a booking entered, and when.',
  fields: (t) => ({
    status: t.field({ type: BookingStatusEnum, description: 'The status entered.', resolve: (h) => h.status }),
    at: t.field({ type: 'DateTime', description: 'When it was entered.', resolve: (h) => new Date(h.at) }),
  }),
});

export const BookingRef = builder.loadableNode(builder.objectRef<Booking>('Booking'), {
  description: "A spa appointment or class booking of one of the reseller's clients (the V3 `booking`).",
  id: { resolve: (b) => b.id },
  load: rowsById(BookingSchema, 'reseller'),
  fields: (t) => ({
    status: t.field({
      type: BookingStatusEnum,
      description: 'PENDING until the provider confirms; CONFIRMED, COMPLETED, CANCELLED or RESCHEDULED.',
      resolve: (b) => b.status,
    }),
    type: t.field({ type: BookingTypeEnum, description: 'SPA or CLASS.', resolve: (b) => b.type }),
    message: t.string({ description: 'Human-readable state of the booking.', resolve: (b) => bookingMessages[b.status] }),
    serviceName: t.exposeString('serviceName', { description: 'The booked services (joined with ", ") or the class name.' }),
    providerName: t.exposeString('providerName', { description: 'The provider’s name when booked.' }),
    date: t.field({ type: 'Date', description: "Appointment date in the provider's zone.", resolve: (b) => b.localDate }),
    time: t.exposeString('localTime', { description: "Appointment time in the provider's zone, HH:MM." }),
    scheduledFor: t.field({ type: 'DateTime', description: 'The instant the appointment starts.', resolve: (b) => b.startsAt }),
    createdAt: t.field({ type: 'DateTime', description: 'When the booking was made.', resolve: (b) => b.createdAt }),
    client: t.field({
      type: ClientRef,
      description: 'The client the booking is for.',
      resolve: (b, _, ctx) => ClientRef.getDataloader(ctx).load(b.clientId),
    }),
    provider: t.field({
      type: ProviderRef,
      description: 'The spa or gym.',
      resolve: (b, _, ctx) => ProviderRef.getDataloader(ctx).load(b.providerId),
    }),
    classInstanceId: t.id({
      nullable: true,
      description: 'The class instance (class bookings); null for a spa appointment.',
      resolve: (b) => b.classInstanceId ?? null,
    }),
    serviceIds: t.idList({
      description: 'The booked services (spa appointments); empty for a class booking.',
      resolve: (b) => b.serviceIds,
    }),
    visitsDeducted: t.exposeInt('visitsDeducted', { description: 'Visits this booking holds (from the pass or an entitlement).' }),
    creditsCharged: t.int({ description: "Credits debited from the client's wallet.", resolve: (b) => b.creditsCharged }),
    copayAmount: t.int({
      nullable: true,
      description: 'Co-pay debited from the business account for this booking, minor units of `currency`; null when none was.',
      resolve: (b) => b.copayAmount ?? null,
    }),
    currency: t.exposeString('currency', { description: 'ISO-4217 currency code of the amounts.' }),
    refund: t.field({
      type: RefundRef,
      nullable: true,
      description: 'What the cancellation gave back; null unless cancelled.',
      resolve: (b) => b.refund ?? null,
    }),
    statusHistory: t.field({
      type: [StatusChangeRef],
      description: 'Every status the booking went through, oldest first (V3 GET /bookings/{id}/status).',
      complexity: { field: 1, multiplier: 3 },
      resolve: (b) => b.history,
    }),
  }),
});

registerNode('booking', BookingRef, { clientSession: true });

// Added apart from the node's own fields: they refer to the Booking type itself.
builder.objectFields(BookingRef, (t) => ({
  rescheduledFrom: t.field({
    type: BookingRef,
    nullable: true,
    description: 'The booking this one replaced; null unless it was made by a reschedule.',
    resolve: (b, _, ctx) => (b.rescheduledFrom ? BookingRef.getDataloader(ctx).load(b.rescheduledFrom) : null),
  }),
  rescheduledTo: t.field({
    type: BookingRef,
    nullable: true,
    description: 'The booking that replaced this one (status RESCHEDULED); null otherwise.',
    resolve: (b, _, ctx) => (b.rescheduledTo ? BookingRef.getDataloader(ctx).load(b.rescheduledTo) : null),
  }),
}));

builder.queryFields((t) => ({
  booking: t.field({
    extensions: forClientSession('read'),
    type: BookingRef,
    nullable: true,
    description: "A booking of this reseller's clients; null for an id this reseller cannot see.",
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(BookingRef, ctx, id),
  }),
}));

// Client.bookings -------------------------------------------------------------------------------

const ClientBookingsConnection = builder.connectionObject(
  { type: BookingRef, name: 'ClientBookingsConnection' },
  { name: 'ClientBookingsConnectionEdge' },
);

builder.objectFields(ClientRef, (t) => ({
  bookings: t.loadable({
    type: ClientBookingsConnection,
    description: "The client's bookings, newest first, optionally of one status and type (as GET /clients/{id}/bookings).",
    byPath: true,
    args: {
      ...t.arg.connectionArgs(),
      status: t.arg.string({ description: `Only bookings in this status: ${bookingStatuses.join(', ')} (any case).` }),
      type: t.arg.string({ description: 'Only bookings of this type: spa or class (any case).' }),
    },
    complexity: connectionCost,
    load: childConnections(
      // A page `client(id:)` read with the client (src/graphql/read-along.ts) is taken; the others are read here.
      withPagesReadAlong('bookings', (ctx, clientIds, page, args: ClientBookingsArgs) =>
        bookingPagesOfClients(ctx, clientIds, page, filtersOf(args)),
      ),
    ),
    resolve: (client) => client.id,
  }),
}));

type ClientBookingsArgs = ConnectionArgs & { status?: string | null; type?: string | null };
const filtersOf = (args: ClientBookingsArgs) => ({ status: args.status ?? undefined, type: args.type ?? undefined });

// `client(id:) { bookings(first:) }`: the client and its first page in one statement.
registerReadAlong(ClientRef, {
  field: 'bookings',
  read: async (ctx, clientId, page, args: ClientBookingsArgs) => {
    const { client, page: first } = await clientWithFirstBookings(ctx, clientId, page, filtersOf(args));
    return { parent: client, page: first };
  },
});

// Mutations ---------------------------------------------------------------------------------------

/** The V3 body as a JSON request would carry it: a field left out or sent as null is absent. */
function body<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as {
    [K in keyof T]?: Exclude<T[K], null>;
  };
}

const BookSpaInputRef = builder.inputType('BookSpaInput', {
  description: 'A spa appointment to book (V3 POST /bookings/spa).',
  fields: (t) => ({
    spaId: t.id({ required: true, description: 'The spa (a provider of category SPA).' }),
    serviceIds: t.idList({ required: true, description: "One or more of the spa's services, booked back to back." }),
    date: t.field({ type: 'Date', required: true, description: "The day, in the spa's zone." }),
    time: t.string({ required: true, description: "The start, HH:MM in the spa's zone, on a quarter hour within opening hours." }),
    clientId: t.id({ description: 'The client; send this or `userPassId` (or both, agreeing).' }),
    userPassId: t.id({ description: "The client's issued pass; send this or `clientId`." }),
    firstName: t.string({
      description: "When sent, must be the client's first name (any case): a guard against booking for the wrong client.",
    }),
    lastName: t.string({ description: "When sent, must be the client's last name (any case)." }),
  }),
});

const ConfirmSpaBookingInputRef = builder.inputType('ConfirmSpaBookingInput', {
  description: 'A spa co-pay session to confirm (V3 POST /bookings/spa/{session_id}/confirm).',
  fields: (t) => ({
    sessionId: t.id({ required: true, description: '`sessionId` of the SpaBookingInitiation that asked for a co-pay.' }),
  }),
});

const BookClassInputRef = builder.inputType('BookClassInput', {
  description: 'A class instance to book a place in (V3 POST /bookings/class).',
  fields: (t) => ({
    classInstanceId: t.id({ required: true, description: 'The class instance.' }),
    clientId: t.id({ description: 'The client; send this or `userPassId` (or both, agreeing).' }),
    userPassId: t.id({ description: "The client's issued pass; send this or `clientId`." }),
    firstName: t.string({
      description: "When sent, must be the client's first name (any case): a guard against booking for the wrong client.",
    }),
    lastName: t.string({ description: "When sent, must be the client's last name (any case)." }),
  }),
});

const ConfirmClassBookingInputRef = builder.inputType('ConfirmClassBookingInput', {
  description:
    'A class session to confirm (V3 POST /bookings/class/{session_id}/confirm): `numberOfVisits` and `duration` ' +
    'for an extra-visits session, `copayPackageId` for a co-pay session.',
  fields: (t) => ({
    sessionId: t.id({ required: true, description: '`sessionId` of the ClassBookingInitiation.' }),
    numberOfVisits: t.int({ description: 'Extra visits to buy, 1 to 50 (extra-visits sessions).' }),
    duration: t.field({ type: ExtraVisitsDurationEnum, description: 'How long the extra visits stay usable (extra-visits sessions).' }),
    copayPackageId: t.id({ description: 'One of the `copayOptions` the initiation offered (co-pay sessions).' }),
  }),
});

const CancelBookingInputRef = builder.inputType('CancelBookingInput', {
  description: 'A booking to cancel (V3 POST /bookings/{id}/cancel).',
  fields: (t) => ({
    bookingId: t.id({ required: true, description: 'The booking.' }),
  }),
});

const RescheduleBookingInputRef = builder.inputType('RescheduleBookingInput', {
  description:
    'Where a booking moves (V3 POST /bookings/{id}/reschedule): `date` and `time` for a spa appointment, ' +
    '`classInstanceId` (an instance at the same provider) for a class booking.',
  fields: (t) => ({
    bookingId: t.id({ required: true, description: 'The booking to move.' }),
    date: t.field({ type: 'Date', description: "The new day, in the spa's zone (spa appointments)." }),
    time: t.string({ description: "The new start, HH:MM in the spa's zone (spa appointments)." }),
    classInstanceId: t.id({ description: 'The class instance to move to (class bookings).' }),
  }),
});

/** What holds the appointment: the booking made now, or the session opened instead. */
const heldBy = (r: Initiation) => r.booking ?? r.session;

const SpaBookingInitiationRef = builder.objectRef<Initiation>('SpaBookingInitiation').implement({
  description: 'The result of bookSpa: the appointment booked now (credits debited), or a session to confirm once the co-pay is collected.',
  fields: (t) => ({
    copayRequired: t.boolean({
      description: 'false: the booking was made; true: a session was opened and a co-pay must be collected, then confirmed.',
      resolve: (r) => r.copayRequired,
    }),
    status: t.field({
      type: BookingInitiationStatusEnum,
      description: 'The booking status (PENDING), or AWAITING_COPAY for a session.',
      resolve: (r) => r.status,
    }),
    message: t.string({ description: 'Human-readable result.', resolve: (r) => r.message }),
    booking: t.field({
      type: BookingRef,
      nullable: true,
      description: 'The booking, when it was made now; null when a co-pay is required.',
      resolve: (r) => r.booking ?? null,
    }),
    sessionId: t.id({
      nullable: true,
      description: 'The session to confirm with confirmSpaBooking, when a co-pay is required.',
      resolve: (r) => r.session?.id ?? null,
    }),
    copayAmount: t.int({
      nullable: true,
      description: 'Co-pay to collect, minor units of `currency`, when a co-pay is required.',
      resolve: (r) => r.session?.copayAmount ?? null,
    }),
    copayCredits: t.int({
      nullable: true,
      description: 'The co-pay in credits, when a co-pay is required.',
      resolve: (r) => r.session?.copayCredits ?? null,
    }),
    currency: t.string({ description: 'ISO-4217 currency code of the co-pay amounts.', resolve: (r) => heldBy(r).currency }),
    sessionExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the session expires (24 hours after it was opened), when a co-pay is required.',
      resolve: (r) => r.session?.expiresAt ?? null,
    }),
    date: t.field({ type: 'Date', description: "Appointment date in the spa's zone.", resolve: (r) => heldBy(r).localDate }),
    time: t.string({ description: "Appointment time in the spa's zone, HH:MM.", resolve: (r) => heldBy(r).localTime }),
    scheduledFor: t.field({
      type: 'DateTime',
      description: 'The instant the appointment starts.',
      resolve: (r) => heldBy(r).startsAt,
    }),
    serviceName: t.string({ description: 'Names of the booked services, joined with ", ".', resolve: (r) => heldBy(r).serviceName }),
    providerName: t.string({ description: 'The spa’s name.', resolve: (r) => heldBy(r).providerName }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When the booking or the session was made.',
      resolve: (r) => heldBy(r).createdAt,
    }),
  }),
});

const ClassBookingInitiationRef = builder.objectRef<Initiation>('ClassBookingInitiation').implement({
  description:
    'The result of bookClass: booked now (a visit taken), or a session to confirm once extra visits or a co-pay option are bought.',
  fields: (t) => ({
    copayRequired: t.boolean({
      description: "true: the pass does not cover the provider's tier; collect one of `copayOptions`, then confirm with its id.",
      resolve: (r) => r.copayRequired,
    }),
    additionalVisitsRequired: t.boolean({
      description: "true: the month's visits are used up; buy extra visits, then confirm.",
      resolve: (r) => r.additionalVisitsRequired,
    }),
    status: t.field({
      type: BookingInitiationStatusEnum,
      description: 'PENDING when booked now; AWAITING_COPAY or AWAITING_VISITS for a session.',
      resolve: (r) => r.status,
    }),
    message: t.string({ description: 'Human-readable result.', resolve: (r) => r.message }),
    booking: t.field({
      type: BookingRef,
      nullable: true,
      description: 'The booking, when made now; null when a session was opened.',
      resolve: (r) => r.booking ?? null,
    }),
    visitsDeducted: t.int({
      nullable: true,
      description: 'Visits taken for the booking, when booked now.',
      resolve: (r) => r.booking?.visitsDeducted ?? null,
    }),
    sessionId: t.id({
      nullable: true,
      description: 'The session to confirm with confirmClassBooking, when a purchase is required.',
      resolve: (r) => r.session?.id ?? null,
    }),
    sessionExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the session expires (24 hours after it was opened), when a purchase is required.',
      resolve: (r) => r.session?.expiresAt ?? null,
    }),
    copayOptions: t.field({
      type: [CopayOptionRef],
      nullable: true,
      description: 'What can be bought, when a co-pay is required; null otherwise.',
      resolve: (r) => (r.copayRequired ? (r.copayOptions ?? []) : null),
    }),
    visitsUsed: t.int({
      nullable: true,
      description: 'Visits used this month, when extra visits are required.',
      resolve: (r) => r.session?.visitsUsed ?? null,
    }),
    maxVisits: t.int({
      nullable: true,
      description: 'Visits the pass allows a month, when extra visits are required.',
      resolve: (r) => r.session?.maxVisits ?? null,
    }),
    costPerVisit: t.int({
      nullable: true,
      description: 'Price of one extra visit, minor units of `currency`, when extra visits are required.',
      resolve: (r) => r.session?.costPerVisit ?? null,
    }),
    currency: t.string({ description: 'ISO-4217 currency code of the amounts.', resolve: (r) => heldBy(r).currency }),
    classInstanceId: t.id({ description: 'The class instance.', resolve: (r) => heldBy(r).classInstanceId ?? '' }),
    className: t.string({ description: 'The class name.', resolve: (r) => heldBy(r).serviceName }),
    providerName: t.string({ description: 'The provider’s name.', resolve: (r) => heldBy(r).providerName }),
    date: t.field({ type: 'Date', description: "Class date in the provider's zone.", resolve: (r) => heldBy(r).localDate }),
    time: t.string({ description: "Class time in the provider's zone, HH:MM.", resolve: (r) => heldBy(r).localTime }),
    scheduledFor: t.field({ type: 'DateTime', description: 'The instant the class starts.', resolve: (r) => heldBy(r).startsAt }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When the booking or the session was made.',
      resolve: (r) => heldBy(r).createdAt,
    }),
  }),
});

const BookingPayloadRef = builder.objectRef<{ booking: Booking }>('BookingPayload').implement({
  description: 'The booking a confirm, cancel or reschedule produced.',
  fields: (t) => ({
    booking: t.field({ type: BookingRef, description: 'The booking as it is now.', resolve: (r) => r.booking }),
  }),
});

builder.mutationFields((t) => ({
  bookSpa: t.field({
    type: SpaBookingInitiationRef,
    description:
      'Books a spa appointment: now, debiting the services’ credits, when the pass covers the spa; else opens a co-pay ' +
      'session to confirm when every service carries a co-pay. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: { ...takesLookupToken, ...forClientSession('book') },
    args: { input: t.arg({ type: BookSpaInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'BookSpaResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        bookSpa(c, {
          spa_id: input.spaId,
          service_ids: input.serviceIds,
          date: input.date,
          time: input.time,
          ...body({ client_id: input.clientId, user_pass_id: input.userPassId, first_name: input.firstName, last_name: input.lastName }),
        }),
      ),
  }),
  confirmSpaBooking: t.field({
    type: BookingPayloadRef,
    description:
      'Confirms a spa co-pay session: debits the co-pay from the business account and books the slot, atomically. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: takesLookupToken,
    args: { input: t.arg({ type: ConfirmSpaBookingInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'ConfirmSpaBookingResult' } },
    resolve: async (_, { input }, ctx) => ({ booking: await runMutation(ctx, (c) => confirmSpaBooking(c, input.sessionId)) }),
  }),
  bookClass: t.field({
    type: ClassBookingInitiationRef,
    description:
      'Books a place in a class instance: now, taking a visit, or opens a session when extra visits or a co-pay ' +
      'must be bought first. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: { ...takesLookupToken, ...forClientSession('book') },
    args: { input: t.arg({ type: BookClassInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'BookClassResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        bookClass(c, {
          class_instance_id: input.classInstanceId,
          ...body({ client_id: input.clientId, user_pass_id: input.userPassId, first_name: input.firstName, last_name: input.lastName }),
        }),
      ),
  }),
  confirmClassBooking: t.field({
    type: BookingPayloadRef,
    description:
      'Confirms a class session: buys the extra visits or the co-pay option (debiting the business account) and books, ' +
      'atomically. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: takesLookupToken,
    args: { input: t.arg({ type: ConfirmClassBookingInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'ConfirmClassBookingResult' } },
    resolve: async (_, { input }, ctx) => ({
      booking: await runMutation(ctx, (c) =>
        confirmClassBooking(
          c,
          input.sessionId,
          body({
            number_of_visits: input.numberOfVisits,
            duration: input.duration,
            copay_package_id: input.copayPackageId,
          }),
        ),
      ),
    }),
  }),
  cancelBooking: t.field({
    extensions: forClientSession('book'),
    type: BookingPayloadRef,
    description:
      "Cancels a spa or class booking; the provider's cancellation policy decides the refund. A second cancel is " +
      'ConflictError already_cancelled. REST takes no Idempotency-Key on cancel; over GraphQL a key belongs to the whole ' +
      'operation, so a cancelBooking sent with one is recorded and replayed like any mutation: send it without one.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: CancelBookingInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'CancelBookingResult' } },
    resolve: async (_, { input }, ctx) => ({ booking: await runMutation(ctx, (c) => cancelBooking(c, input.bookingId)) }),
  }),
  rescheduleBooking: t.field({
    type: BookingPayloadRef,
    description:
      'Moves a booking: the old one becomes RESCHEDULED and the answer is the new PENDING booking (`rescheduledFrom` ' +
      'names the old one), carrying what the old one paid; nothing is charged again. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: RescheduleBookingInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RescheduleBookingResult' } },
    resolve: async (_, { input }, ctx) => ({
      booking: await runMutation(ctx, (c) =>
        rescheduleBooking(
          c,
          input.bookingId,
          body({
            date: input.date,
            time: input.time,
            class_instance_id: input.classInstanceId,
          }),
        ),
      ),
    }),
  }),
}));

// Subscription.bookingStatusChanged ----------------------------------------------------------------

/** The events that change a booking's status (docs/partner-guide.md "Live booking status"). */
const BOOKING_STATUS_EVENTS = [
  'booking.created',
  'booking.confirmed',
  'booking.cancelled',
  'booking.completed',
  'booking.rescheduled',
] as const satisfies readonly EventType[];

const BookingStatusEventRef = builder.objectRef<LiveEvent>('BookingStatusEvent').implement({
  description: "A booking's status changed: the event recorded (as GET /events lists it) and the booking as it is now.",
  fields: (t) => ({
    eventId: t.id({
      description: 'The event (`evt_…`), also the SSE message `id:`: resume after it with `Last-Event-ID` or `after`.',
      resolve: (e) => e.id,
    }),
    type: t.string({
      description: 'The event type: booking.created, booking.confirmed, booking.cancelled, booking.completed or booking.rescheduled.',
      resolve: (e) => e.type,
    }),
    occurredAt: t.field({ type: 'DateTime', description: 'When the event was recorded.', resolve: (e) => e.occurredAt }),
    booking: t.field({
      type: BookingRef,
      description: 'The booking, read when the event is sent (a later change may already show).',
      resolve: (e, _, ctx) => onceForEvent(e, ctx, () => BookingRef.getDataloader(ctx).load(e.objectId)),
    }),
  }),
});

builder.subscriptionField('bookingStatusChanged', (t) =>
  t.field({
    type: BookingStatusEventRef,
    description:
      "Every status change of this reseller's bookings (a client session's: its own client's), in the order they " +
      'committed: booked, confirmed, cancelled, completed, rescheduled. Over Server-Sent Events; each message has `id:` ' +
      '(the event id): a reconnect sends it as `Last-Event-ID`, or names it in `after`, and gets what it missed first.',
    authScopes: { reseller: true },
    extensions: forClientSession('read'),
    args: {
      after: t.arg.id({
        description:
          'Start after this event (`evt_…`, of this caller): the events since are sent first, in order. `Last-Event-ID`, when sent, wins.',
      }),
    },
    subscribe: (_root, { after }, ctx) => subscribeToEvents(ctx, BOOKING_STATUS_EVENTS, after),
    resolve: (event) => event,
  }),
);
