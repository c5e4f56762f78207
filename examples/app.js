// The example partner frontend (docs/partner-guide.md "The example frontend"): a client session's
// token, the SDK (served by the gateway from packages/sdk), and nothing else.
import {
  BookClass,
  createClient,
  GatewayError,
  GetClient,
  GetCurrentSession,
  ListBookings,
  ListClasses,
  WatchBookingStatus,
} from './sdk/index.ts';
import { say, setBookingStatus, setLive, showBookings, showClasses, showClient, showError, showSessionForm } from './view.js';

/** `52.52,13.405` as the `near` argument of `classes`, or undefined when it is not a latitude and a longitude. */
function nearOf(text) {
  const [lat, lon] = (text ?? '').split(',').map((part) => Number(part.trim()));
  return Number.isFinite(lat) && Number.isFinite(lon) ? { lat, lon } : undefined;
}

/** The session the page acts for, from `#token=cs_…[&near=lat,lon]`; taken out of the address bar at once. */
function sessionFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token');
  // Out of the address bar and the history, so it is not copied or bookmarked with the page's URL.
  if (location.hash !== '') history.replaceState(null, '', `${location.pathname}${location.search}`);
  return token ? { token, near: nearOf(fragment.get('near')) } : undefined;
}

/** Words for a refused request: the catalogue code says what the reader can do about it (docs/errors.md). */
function describe(error) {
  // fetch rejects with a TypeError when the request never got an answer.
  if (error instanceof TypeError) return `The gateway could not be reached (${error.message}). Try again.`;
  if (!(error instanceof GatewayError)) return error.message;
  const detail = ` (${error.code}${error.requestId ? `, request ${error.requestId}` : ''})`;
  switch (error.code) {
    case 'invalid_client_session':
      return `This session has expired or was revoked: ask for a new one.${detail}`;
    case 'account_disabled':
      return `This account is disabled.${detail}`;
    case 'permission_denied':
      return `This session may not do that: ${error.message}${detail}`;
    case 'rate_limited':
      return `Too many requests: wait a moment and try again.${detail}`;
    default:
      return `${error.message}${detail}`;
  }
}

let stopCurrent = () => {};

async function open({ token, near }) {
  stopCurrent();
  const stop = new AbortController();
  stopCurrent = () => stop.abort();
  showError('');
  const gateway = createClient({
    url: new URL('/graphql', location.origin).href,
    getToken: () => token,
    // The stream's answer arrives once the gateway holds the subscription: from then on no status change is missed.
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (response.ok && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) setLive('on');
      return response;
    },
  });

  /** The client the token acts for, and whether it may book: the token tells both (currentClientSession), before anything else is read. */
  let clientId;
  let canBook = false;
  // The class instances the client holds a booking for: their button says so instead of Book.
  let booked = new Set();
  const refreshBookings = async () => {
    const { client } = await gateway.request(ListBookings, { clientId, first: 20 });
    const bookings = client ? client.bookings.edges.map((edge) => edge.node) : [];
    booked = new Set(bookings.filter((b) => b.status !== 'CANCELLED' && b.classInstanceId).map((b) => b.classInstanceId));
    showBookings(bookings);
  };
  const refreshClasses = async () => {
    // Nearest first within 50 km when the page was given a place; else the catalogue's newest classes.
    const { classes } = await gateway.request(ListClasses, { first: 10, instances: 5, ...(near ? { near } : {}) });
    showClasses(
      classes.edges.map((edge) => edge.node),
      booked,
      canBook ? book : null,
      near ? `Nearest first, within 50 km of ${near.lat}, ${near.lon}` : 'Newest first',
    );
  };

  // One Idempotency-Key per class instance until the gateway answers: a retry after a lost answer
  // sends the same key, so it cannot book twice (docs/partner-guide.md "Idempotency").
  const keys = new Map();
  const book = async (instance, button) => {
    if (button.disabled) return;
    button.disabled = true;
    const idempotencyKey = keys.get(instance.id) ?? crypto.randomUUID();
    keys.set(instance.id, idempotencyKey);
    try {
      const { bookClass } = await gateway.request(BookClass, { input: { classInstanceId: instance.id, clientId } }, { idempotencyKey });
      keys.delete(instance.id);
      if (bookClass.__typename !== 'ClassBookingInitiation') {
        showError(`Not booked: ${bookClass.message} (${bookClass.code})`);
      } else if (bookClass.booking === null) {
        // A co-pay or more visits are needed: a confirm the reseller's server makes, not a client session.
        showError('');
        say(`Not booked yet: ${bookClass.message}`);
      } else {
        showError('');
        say(`Booked ${bookClass.className} at ${bookClass.providerName}, ${bookClass.date} ${bookClass.time}: ${bookClass.booking.status}`);
        await refreshBookings();
      }
      // Spots left changed either way (a refusal may be the class filling up).
      await refreshClasses();
    } catch (error) {
      button.disabled = false;
      showError(describe(error));
    }
  };

  const watch = async () => {
    try {
      for await (const { data } of gateway.subscribe(WatchBookingStatus, {}, { resume: true, signal: stop.signal })) {
        const { booking } = data.bookingStatusChanged;
        say(`Booking at ${booking.provider?.name ?? 'a provider'} is now ${booking.status}`);
        const shown = setBookingStatus(booking.id, booking.status);
        // A booking made elsewhere (by the reseller's server) or given up changes the lists, not only a status.
        if (!shown || booking.status === 'CANCELLED' || booking.status === 'RESCHEDULED') {
          await refreshBookings()
            .then(refreshClasses)
            .catch((error) => showError(describe(error)));
        }
      }
    } catch (error) {
      if (stop.signal.aborted) return;
      setLive('off');
      showError(describe(error));
    }
  };

  try {
    const { currentClientSession } = await gateway.request(GetCurrentSession);
    if (currentClientSession === null) throw new Error('This page takes a client-session token (cs_…), never an API key.');
    clientId = currentClientSession.client.id;
    canBook = currentClientSession.scopes.includes('BOOK');
    const [{ client }] = await Promise.all([gateway.request(GetClient, { id: clientId }), refreshBookings()]);
    if (client === null) throw new Error(`The client ${clientId} cannot be read.`);
    await refreshClasses();
    showSessionForm(false);
    showClient(client);
    void watch();
  } catch (error) {
    stop.abort();
    showSessionForm(true);
    showError(describe(error));
  }
}

document.querySelector('#session-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  void open({ token: String(form.get('token')).trim(), near: nearOf(String(form.get('near'))) });
});

const fromFragment = sessionFromFragment();
if (fromFragment) void open(fromFragment);
