import type { EmittedEventType, EventObjects } from './events.payloads.ts';

// The catalogue of event types: what a webhook endpoint can subscribe to (`enabled_events`) and
// receive. It is a public contract: types are added, never renamed or reshaped (docs/partner-guide.md "Events").
// Each entry names the `object` of its `data.object` and says what happened; its payload (type,
// schema and presenter) is defined by the module that emits it (events.payloads.ts).

/** One catalogued event type; `Obj` is its `data.object`'s `object`. */
export interface EventSpec<Obj extends string = string> {
  readonly object: Obj;
  readonly meaning: string;
  /** Whether a use case records it today; a planned type waits for its module. */
  readonly emitted: boolean;
}

/** An event some use case records today. */
const emitted = <Obj extends string>(object: Obj, meaning: string): EventSpec<Obj> => ({ object, meaning, emitted: true });
// A decided type whose module does not exist yet is listed as `{ object, meaning, emitted: false }`:
// it cannot be recorded until its module defines its payload. Every decided type is recorded today.

export const eventCatalog = {
  'issued_pass.created': emitted('issued_pass', 'A pass was issued to a new client.'),
  'issued_pass.updated': emitted('issued_pass', 'An issued pass changed: another pass package, or a new expiry.'),
  'issued_pass.renewed': emitted('pass_renewal', 'A PREPAID pass was renewed for one more period and its price debited.'),
  'issued_pass.expired': emitted('issued_pass', 'An issued pass passed its expiry without renewal (found by the expiry sweep).'),
  'booking.created': emitted('booking', 'A class or spa slot was booked (PENDING).'),
  'booking.confirmed': emitted('booking', 'The provider confirmed a booking (PENDING to CONFIRMED).'),
  'booking.cancelled': emitted('booking', 'A booking was cancelled; its `refund` says what went back.'),
  'booking.completed': emitted('booking', 'The provider checked the client in (CONFIRMED to COMPLETED).'),
  'booking.rescheduled': emitted('booking', 'A booking moved to another time: it is RESCHEDULED and a new PENDING booking replaces it.'),
  'booking_session.created': emitted(
    'booking_session',
    'A booking needs a co-pay or extra visits first: a session to confirm it was opened.',
  ),
  'booking_session.expired': emitted('booking_session', 'A booking session ran out (24 h) before it was confirmed.'),
  'access_code.created': emitted('access_code', 'A single-use access code (QR) was generated for a client.'),
  'access_code.redeemed': emitted('access_code', 'A provider redeemed an access code, recording a visit.'),
  'credits.purchased': emitted('credit_purchase', "A credit package was bought into a client's wallet, debiting the business account."),
  'lookup.verified': emitted('lookup', 'A lookup was verified with the code mailed to the client and a lookup token issued.'),
  'hosted_session.completed': emitted('hosted_session', 'A client finished a hosted session: booked, or got an access code.'),
  'hosted_session.expired': emitted('hosted_session', 'A hosted session expired unused.'),
} as const satisfies Record<string, EventSpec>;

export type EventType = keyof typeof eventCatalog;

/** An event as stored in the outbox and delivered (`object: "event"`). */
export interface DomainEvent<T extends EmittedEventType = EmittedEventType> {
  id: string;
  object: 'event';
  type: T;
  created: number;
  data: { object: EventObjects[T] };
  request: { id: string; idempotency_key: string | null };
}
