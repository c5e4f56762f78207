import { CLIENTS, INSTANCES, SPAS, countSlot, spaSlot, type BookingsSeed, type Spa } from './seed.ts';

// The three requests of the bookings bench and the data each one names. Under load a request
// takes the next k of its kind (one counter per kind, shared by our server and the bare handler),
// so no (client, class instance) pair repeats and spa appointments spread over spas and days
// (seed.ts). The statement count names its own instances and days (countSlot).

export const V3 = '/v3/api/business/reseller';
export type Kind = 'class' | 'spa' | 'confirm';

export interface Sent {
  path: string;
  body?: string;
}

export const classBooking = (seed: BookingsSeed, instanceId: string, clientIndex: number): Sent => ({
  path: `${V3}/bookings/class`,
  body: JSON.stringify({ class_instance_id: instanceId, client_id: seed.clients[clientIndex % CLIENTS].id }),
});

export const spaBooking = (seed: BookingsSeed, spa: Spa, at: { date: string; time: string }, clientIndex: number): Sent => ({
  path: `${V3}/bookings/spa`,
  body: JSON.stringify({
    spa_id: spa.id,
    service_ids: [spa.serviceId],
    date: at.date,
    time: at.time,
    client_id: seed.clients[clientIndex % CLIENTS].id,
  }),
});

export const confirmation = (sessionId: string): Sent => ({ path: `${V3}/bookings/spa/${sessionId}/confirm` });

/** The k-th request of a kind under load. */
export const loadClass = (seed: BookingsSeed, k: number) => classBooking(seed, seed.instances[k % INSTANCES], k);
export const loadSpa = (seed: BookingsSeed, k: number) => spaBooking(seed, seed.spas[k % SPAS], spaSlot(seed, k), k);
/** The k-th co-pay session opened for the confirm load (POST /bookings/spa at a spa the pass does not cover). */
export const loadSession = (seed: BookingsSeed, k: number) => spaBooking(seed, seed.copaySpas[k % SPAS], spaSlot(seed, k), k);

/** The count's requests: unit u is one class instance or one spa day of its own; j the j-th booking there. */
export const countClass = (seed: BookingsSeed, unit: number, j: number) => classBooking(seed, seed.countInstances[unit], j);
export const countSpa = (seed: BookingsSeed, unit: number, j: number) => spaBooking(seed, seed.countSpa, countSlot(seed, unit, j), j);
export const countSession = (seed: BookingsSeed, unit: number, j: number) =>
  spaBooking(seed, seed.countCopaySpa, countSlot(seed, unit, j), j);

export interface Answer {
  status: number;
  body: any;
}

/** POSTs one request to `base` with the key (and an Idempotency-Key when given). */
export async function post(base: string, seed: BookingsSeed, sent: Sent, idempotencyKey?: string): Promise<Answer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${seed.apiKey}` };
  if (sent.body !== undefined) headers['Content-Type'] = 'application/json';
  if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
  const res = await fetch(`${base}${sent.path}`, { method: 'POST', headers, body: sent.body });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text for the message */
  }
  return { status: res.status, body };
}

/** True when the answer is the 201 a successful request of this kind gets. */
export function succeeded(kind: Kind | 'session', a: Answer): boolean {
  if (a.status !== 201) return false;
  switch (kind) {
    case 'class':
      return a.body?.object === 'class_booking_initiation' && a.body.status === 'PENDING' && typeof a.body.booking_id === 'string';
    case 'spa':
      return a.body?.object === 'spa_booking_initiation' && a.body.status === 'PENDING' && typeof a.body.booking_id === 'string';
    case 'session':
      return a.body?.object === 'spa_booking_initiation' && a.body.status === 'AWAITING_COPAY' && typeof a.body.session_id === 'string';
    case 'confirm':
      return a.body?.object === 'booking' && a.body.status === 'PENDING' && a.body.copay_amount === 100;
  }
}

/** One 201 or an error naming what came back. */
export async function expectSuccess(
  kind: Kind | 'session',
  base: string,
  seed: BookingsSeed,
  sent: Sent,
  idempotencyKey?: string,
): Promise<Answer> {
  const a = await post(base, seed, sent, idempotencyKey);
  if (!succeeded(kind, a)) throw new Error(`${kind} ${sent.path} answered ${a.status} ${JSON.stringify(a.body).slice(0, 500)}`);
  return a;
}
