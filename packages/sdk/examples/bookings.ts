// A partner frontend's bookings screen with the SDK: list the client's bookings, book a class, cancel
// it. `npx tsc --noEmit -p packages/sdk` type-checks this file against the SDK (test/sdk/sdk.static.test.ts).
import { BookClass, CancelBooking, createClient, GatewayError, GetClass, ListBookings, type ResultOf } from '@reseller-gateway/sdk';

/**
 * Your own backend creates the client session with your API key (POST /client_sessions, see the
 * SDK's README) and answers the signed-in user's token; the API key never reaches the browser.
 */
interface Session {
  token: string;
  clientId: string;
  expiresAt: string;
}

let session: Session | undefined;

async function currentSession(): Promise<Session> {
  // A session lasts up to an hour: fetch a new one a minute before this one ends.
  if (session === undefined || Date.parse(session.expiresAt) - Date.now() < 60_000) {
    const response = await fetch('/api/gateway-session', { method: 'POST', credentials: 'same-origin' });
    if (!response.ok) throw new Error(`Could not start a gateway session: HTTP ${response.status}`);
    session = (await response.json()) as Session;
  }
  return session;
}

const gateway = createClient({
  url: 'https://gateway.example.com/graphql',
  getToken: async () => (await currentSession()).token,
});

type BookingEdge = NonNullable<ResultOf<typeof ListBookings>['client']>['bookings']['edges'][number];

/** Every booking of the signed-in client, page by page, each with its provider. */
export async function listBookings(): Promise<BookingEdge['node'][]> {
  const { clientId } = await currentSession();
  const bookings: BookingEdge['node'][] = [];
  let after: string | null | undefined;
  do {
    const { client } = await gateway.request(ListBookings, { clientId, first: 20, after });
    if (client === null) return bookings;
    bookings.push(...client.bookings.edges.map((edge) => edge.node));
    after = client.bookings.pageInfo.hasNextPage ? client.bookings.pageInfo.endCursor : undefined;
  } while (after);
  return bookings;
}

/** Books the first instance of a class with a spot left; answers the booking's id, or why it could not. */
export async function bookFirstFreeInstance(classId: string): Promise<{ bookingId: string } | { refused: string }> {
  const { clientId } = await currentSession();
  const { class: cls } = await gateway.request(GetClass, { id: classId });
  const instance = cls?.instances.edges.map((edge) => edge.node).find((i) => i.status === 'SCHEDULED' && i.spotsRemaining > 0);
  if (instance === undefined) return { refused: 'No instance with a spot left' };

  // One key per booking attempt: if the answer is lost, sending the same request with the same key
  // cannot book twice. The SDK never retries on its own.
  const idempotencyKey = crypto.randomUUID();
  const { bookClass } = await gateway.request(BookClass, { input: { classInstanceId: instance.id, clientId } }, { idempotencyKey });
  switch (bookClass.__typename) {
    case 'ClassBookingInitiation':
      // A booking now, or (co-pay, extra visits) a session the client confirms first.
      return bookClass.booking ? { bookingId: bookClass.booking.id } : { refused: bookClass.message };
    case 'ConflictError': // class_full, already_booked …
    case 'UnprocessableError':
    case 'PermissionError':
    case 'NotFoundError':
    case 'InputError':
    case 'IdempotencyError':
      return { refused: `${bookClass.code}: ${bookClass.message}` };
  }
}

/** Cancels a booking; answers what came back to the client under the provider's policy. */
export async function cancel(bookingId: string): Promise<string> {
  try {
    const { cancelBooking } = await gateway.request(CancelBooking, { input: { bookingId } });
    if (cancelBooking.__typename !== 'BookingPayload') return `Not cancelled: ${cancelBooking.code}`;
    const refund = cancelBooking.booking.refund;
    return refund
      ? `Cancelled (${refund.policy}): ${refund.creditsRefunded} credits and ${refund.visitsRestored} visits back`
      : 'Cancelled';
  } catch (error) {
    // Thrown only when the gateway refused the whole request: an expired token, a rate limit …
    if (error instanceof GatewayError && error.code === 'rate_limited') return 'Too many requests: try again in a moment';
    throw error;
  }
}
