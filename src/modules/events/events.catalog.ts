import type { IssuedPassObject, PassRenewalObject } from '../passes/index.ts';
import type { BookingObject, BookingSessionObject } from '../bookings/index.ts';
import type { LookupObject } from '../lookups/index.ts';
import type { AccessCodeObject } from '../access-codes/index.ts';
import type { CreditPurchaseObject } from '../credits/index.ts';
import type { HostedSessionObject } from '../hosted-sessions/index.ts';

// The catalogue of event types: what a webhook endpoint can subscribe to (`enabled_events`) and
// receive. It is a public contract: types are added, never renamed or reshaped (docs/partner-guide.md "Events").
// Each entry names the `object` of its `data.object` and says what happened; its payload type
// comes from the module that emits it (that module's presenter, the V3 representation).

/** One catalogued event type; `Payload` is its `data.object`, `never` while nothing emits it. */
export interface EventSpec<Payload> {
  readonly object: string;
  readonly meaning: string;
  /** Whether a use case records it today; a planned type waits for its module. */
  readonly emitted: boolean;
  /** Type-level only: carries the payload type, never set. */
  readonly payload?: Payload;
}

/** An event some use case records today. */
const emitted = <Payload extends { object: string }>(object: Payload['object'], meaning: string): EventSpec<Payload> => ({
  object,
  meaning,
  emitted: true,
});
// A decided type whose module does not exist yet is listed as `{ object, meaning, emitted: false }`
// typed EventSpec<never>: it cannot be recorded until it gets a payload type. Every decided type is
// recorded today.

export const eventCatalog = {
  'issued_pass.created': emitted<IssuedPassObject>('issued_pass', 'A pass was issued to a new client.'),
  'issued_pass.updated': emitted<IssuedPassObject>('issued_pass', 'An issued pass changed: another pass package, or a new expiry.'),
  'issued_pass.renewed': emitted<PassRenewalObject>(
    'pass_renewal',
    'A PREPAID pass was renewed for one more period and its price debited.',
  ),
  'issued_pass.expired': emitted<IssuedPassObject>(
    'issued_pass',
    'An issued pass passed its expiry without renewal (found by the expiry sweep).',
  ),
  'booking.created': emitted<BookingObject>('booking', 'A class or spa slot was booked (PENDING).'),
  'booking.confirmed': emitted<BookingObject>('booking', 'The provider confirmed a booking (PENDING to CONFIRMED).'),
  'booking.cancelled': emitted<BookingObject>('booking', 'A booking was cancelled; its `refund` says what went back.'),
  'booking.completed': emitted<BookingObject>('booking', 'The provider checked the client in (CONFIRMED to COMPLETED).'),
  'booking.rescheduled': emitted<BookingObject>(
    'booking',
    'A booking moved to another time: it is RESCHEDULED and a new PENDING booking replaces it.',
  ),
  'booking_session.created': emitted<BookingSessionObject>(
    'booking_session',
    'A booking needs a co-pay or extra visits first: a session to confirm it was opened.',
  ),
  'booking_session.expired': emitted<BookingSessionObject>('booking_session', 'A booking session ran out (24 h) before it was confirmed.'),
  'access_code.created': emitted<AccessCodeObject>('access_code', 'A single-use access code (QR) was generated for a client.'),
  'access_code.redeemed': emitted<AccessCodeObject>('access_code', 'A provider redeemed an access code, recording a visit.'),
  'credits.purchased': emitted<CreditPurchaseObject>(
    'credit_purchase',
    "A credit package was bought into a client's wallet, debiting the business account.",
  ),
  'lookup.verified': emitted<LookupObject>('lookup', 'A lookup was verified with the code mailed to the client and a lookup token issued.'),
  'hosted_session.completed': emitted<HostedSessionObject>(
    'hosted_session',
    'A client finished a hosted session: booked, or got an access code.',
  ),
  'hosted_session.expired': emitted<HostedSessionObject>('hosted_session', 'A hosted session expired unused.'),
} as const satisfies Record<string, EventSpec<unknown>>;

export type EventType = keyof typeof eventCatalog;

/** Each event type's `data.object`. */
export type EventObjects = { [T in EventType]: (typeof eventCatalog)[T] extends EventSpec<infer P> ? P : never };

/** The types some use case records today (the others are `never`). */
export type EmittedEventType = { [T in EventType]: [EventObjects[T]] extends [never] ? never : T }[EventType];

/** An event as stored in the outbox and delivered (`object: "event"`). */
export interface DomainEvent<T extends EventType = EventType> {
  id: string;
  object: 'event';
  type: T;
  created: number;
  data: { object: EventObjects[T] };
  request: { id: string; idempotency_key: string | null };
}
