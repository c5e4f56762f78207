import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDueWebhooks } from '../../src/modules/webhooks/index.ts';
import { guardedLookup, isPrivateAddress } from '../../src/modules/webhooks/urls.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp, type TestApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { v3 } from '../support/http.ts';
import {
  createEndpoint,
  deliveriesOf,
  dispatch,
  fanOut,
  makeEvent,
  passFor,
  Receiver,
  settlePendingDeliveries,
  verified,
  verifies,
} from '../support/webhooks.ts';

// Delivery (docs/partner-guide.md "Webhooks"), to a real receiver on loopback, every request verified with the
// public Standard Webhooks library: what is sent and signed, to which endpoints, the retry schedule
// on the domain clock, 410, redirects, timeouts, key rotation and the private-address rule.

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const slow = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '300' });
const log = createLogger({ LOG_LEVEL: 'silent' });

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.down();
});
afterEach(async () => {
  await settlePendingDeliveries(app);
  await settlePendingDeliveries(slow);
});

async function world(a: TestApp = app): Promise<{ reseller: TestReseller; pass: string }> {
  const reseller = await createReseller(a);
  return { reseller, pass: await passFor(a, reseller) };
}

const secondsFromNow = (a: TestApp, at: Date | null) => (new Date(at!).getTime() - a.clock.now().getTime()) / 1000;

describe('what is delivered', () => {
  it('the event as GET /events shows it, POSTed as JSON with webhook-id, -timestamp and -signature that verify', async () => {
    const { reseller, pass } = await world();
    const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/hooks/gateway?tenant=7') });
    const { eventId } = await makeEvent(app, reseller, pass);
    expect(await dispatch(app)).toBe(1);

    const [receipt] = receiver.of(eventId);
    expect(receiver.of(eventId)).toHaveLength(1);
    expect(receipt.path).toBe('/hooks/gateway?tenant=7');
    expect(receipt.headers['content-type']).toBe('application/json');
    expect(receipt.headers['webhook-id']).toBe(eventId);
    expect(Math.abs(Number(receipt.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(receipt.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const event = verified(endpoint.secret, receipt);
    const listed = await v3(app, `/events/${eventId}`, { key: reseller.key });
    expect(event).toEqual(listed.body);
    expect(receipt.body).toBe(JSON.stringify(listed.body)); // the exact bytes that were signed
    expect(event).toMatchObject({ object: 'event', type: 'issued_pass.created', data: { object: { object: 'issued_pass' } } });

    expect(await deliveriesOf(app, endpoint.id)).toEqual([
      expect.objectContaining({
        event_id: eventId,
        event_type: 'issued_pass.created',
        status: 'SUCCEEDED',
        attempts: 1,
        next_attempt_at: null,
        last_response_status: 200,
        last_error: null,
      }),
    ]);
    const rest = await v3(app, `/webhook_endpoints/${endpoint.id}/deliveries`, { key: reseller.key });
    expect(rest.body.data).toEqual([
      {
        object: 'webhook_delivery',
        id: expect.stringMatching(/^whd_/),
        webhook_endpoint_id: endpoint.id,
        event_id: eventId,
        event_type: 'issued_pass.created',
        status: 'SUCCEEDED',
        attempts: 1,
        next_attempt_at: null,
        last_response_status: 200,
        last_error: null,
        created: expect.any(Number),
        updated: expect.any(Number),
      },
    ]);
    expect(await dispatch(app)).toBe(0); // delivered once
  });

  it('enabled_events: each endpoint gets the types it listed, ["*"] every type; another reseller’s endpoints nothing', async () => {
    const { reseller, pass } = await world();
    const updates = await createEndpoint(app, reseller, { url: receiver.url('/updates'), enabled_events: ['issued_pass.updated'] });
    const all = await createEndpoint(app, reseller, { url: receiver.url('/all'), enabled_events: ['*'] });
    const bookings = await createEndpoint(app, reseller, {
      url: receiver.url('/bookings'),
      enabled_events: ['booking.created', 'booking.cancelled'],
    });
    const stranger = await world();
    const foreign = await createEndpoint(app, stranger.reseller, { url: receiver.url('/foreign') });

    const { eventId: created, clientId } = await makeEvent(app, reseller, pass);
    const other = await passFor(app, reseller);
    const update = await v3(app, '/issued_passes/update', { key: reseller.key, body: { client_id: clientId, pass_id: other } });
    expect(update.status, update.text).toBe(200);
    const updated = (await v3(app, '/events?type=issued_pass.updated', { key: reseller.key })).body.data[0].id;
    expect(await dispatch(app)).toBe(3);

    const types = (path: string) =>
      receiver.receipts
        .filter((r) => r.path === path && [created, updated].includes(r.headers['webhook-id'] as string))
        .map((r) => r.headers['webhook-id']);
    expect(types('/updates')).toEqual([updated]);
    expect(types('/all').sort()).toEqual([created, updated].sort());
    expect(types('/bookings')).toEqual([]);
    expect(types('/foreign')).toEqual([]);
    expect(await deliveriesOf(app, bookings.id)).toEqual([]);
    expect(await deliveriesOf(app, foreign.id)).toEqual([]);
    for (const r of receiver.receipts.filter((x) => x.path === '/all' && [created, updated].includes(x.headers['webhook-id'] as string)))
      verified(all.secret, r);
    verified(
      updates.secret,
      receiver.of(updated).find((r) => r.path === '/updates')!,
    );
  });
});

describe('retries', () => {
  it('receiver down › retried on the schedule (5 s, then 5 min, ±10 %) › delivered when it is back', async () => {
    const down = await Receiver.start();
    await down.down();
    try {
      const { reseller, pass } = await world();
      const endpoint = await createEndpoint(app, reseller, { url: down.url() });
      const { eventId } = await makeEvent(app, reseller, pass);
      expect(await dispatch(app)).toBe(1);
      let [d] = await deliveriesOf(app, endpoint.id);
      expect(d).toMatchObject({
        status: 'PENDING',
        attempts: 1,
        last_response_status: null,
        last_error: expect.stringContaining('ECONNREFUSED'),
      });
      expect(secondsFromNow(app, d.next_attempt_at)).toBeGreaterThanOrEqual(4.5);
      expect(secondsFromNow(app, d.next_attempt_at)).toBeLessThanOrEqual(5.5);
      expect(await dispatch(app)).toBe(0); // not due yet

      app.clock.advance(5_500);
      expect(await dispatch(app)).toBe(1);
      [d] = await deliveriesOf(app, endpoint.id);
      expect(d).toMatchObject({ status: 'PENDING', attempts: 2 });
      expect(secondsFromNow(app, d.next_attempt_at)).toBeGreaterThanOrEqual(270);
      expect(secondsFromNow(app, d.next_attempt_at)).toBeLessThanOrEqual(330);

      await down.up();
      app.clock.advance(269_000);
      expect(await dispatch(app)).toBe(0);
      app.clock.advance(61_000);
      expect(await dispatch(app)).toBe(1);
      [d] = await deliveriesOf(app, endpoint.id);
      expect(d).toMatchObject({ status: 'SUCCEEDED', attempts: 3, last_response_status: 200, last_error: null, next_attempt_at: null });
      expect(down.of(eventId)).toHaveLength(1);
      verified(endpoint.secret, down.of(eventId)[0]);
    } finally {
      await down.down();
    }
  });

  it('every attempt failing › 8 attempts on the whole schedule, then FAILED; a retry by hand delivers it', async () => {
    const failing = await Receiver.start({ status: 500 });
    try {
      const { reseller, pass } = await world();
      const endpoint = await createEndpoint(app, reseller, { url: failing.url() });
      const { eventId } = await makeEvent(app, reseller, pass);
      for (const seconds of [5, 300, 1800, 7200, 18000, 36000, 36000]) {
        expect(await dispatch(app)).toBe(1);
        const [d] = await deliveriesOf(app, endpoint.id);
        expect(d).toMatchObject({ status: 'PENDING', last_response_status: 500, last_error: 'HTTP 500' });
        const wait = secondsFromNow(app, d.next_attempt_at);
        expect(wait, `after attempt ${d.attempts}`).toBeGreaterThanOrEqual(seconds * 0.9 - 0.001);
        expect(wait, `after attempt ${d.attempts}`).toBeLessThanOrEqual(seconds * 1.1 + 0.001);
        app.clock.advance(Math.ceil(wait * 1000));
      }
      expect(await dispatch(app)).toBe(1);
      const [failed] = await deliveriesOf(app, endpoint.id);
      expect(failed).toMatchObject({ status: 'FAILED', attempts: 8, next_attempt_at: null, last_response_status: 500 });
      app.clock.advance(7 * 24 * 3600_000);
      expect(await dispatch(app)).toBe(0);
      expect(failing.of(eventId)).toHaveLength(8);

      failing.behaviour = { status: 202 };
      const retry = await v3(app, `/webhook_endpoints/${endpoint.id}/deliveries/${failed.id}/retry`, { key: reseller.key, method: 'POST' });
      expect(retry.status, retry.text).toBe(200);
      expect(retry.body).toMatchObject({
        id: failed.id,
        status: 'PENDING',
        attempts: 8,
        next_attempt_at: Math.floor(app.clock.now().getTime() / 1000),
      });
      expect(await dispatch(app)).toBe(1);
      expect(await deliveriesOf(app, endpoint.id)).toEqual([
        expect.objectContaining({ status: 'SUCCEEDED', attempts: 9, last_response_status: 202 }),
      ]);
      const receipts = failing.of(eventId);
      expect(receipts).toHaveLength(9); // the same event each time: a receiver drops repeats by webhook-id
      for (const r of receipts) verified(endpoint.secret, r);
    } finally {
      await failing.down();
    }
  });

  it('410 Gone › the endpoint is DISABLED and its pending deliveries FAILED; later events are not queued for it', async () => {
    const gone = await Receiver.start({ status: 503 });
    try {
      const { reseller, pass } = await world();
      const endpoint = await createEndpoint(app, reseller, { url: gone.url() });
      await makeEvent(app, reseller, pass);
      await makeEvent(app, reseller, pass);
      expect(await dispatch(app)).toBe(2);
      gone.behaviour = { status: 410 };
      app.clock.advance(6_000);
      expect(await dispatch(app)).toBe(2);
      const rows = await deliveriesOf(app, endpoint.id);
      expect(rows.map((r) => r.status)).toEqual(['FAILED', 'FAILED']);
      expect(rows.every((r) => r.next_attempt_at === null && r.last_error!.includes('410'))).toBe(true);
      const got = await v3(app, `/webhook_endpoints/${endpoint.id}`, { key: reseller.key });
      expect(got.body.status).toBe('DISABLED');
      const received = gone.receipts.length;
      await makeEvent(app, reseller, pass);
      app.clock.advance(3600_000);
      expect(await dispatch(app)).toBe(0);
      expect(await deliveriesOf(app, endpoint.id)).toHaveLength(2);
      expect(gone.receipts.length).toBe(received);
    } finally {
      await gone.down();
    }
  });

  it('a redirect › not followed, counted as a failed attempt', async () => {
    const target = await Receiver.start();
    const redirecting = await Receiver.start({ redirectTo: target.url('/elsewhere') });
    try {
      const { reseller, pass } = await world();
      const endpoint = await createEndpoint(app, reseller, { url: redirecting.url() });
      const { eventId } = await makeEvent(app, reseller, pass);
      expect(await dispatch(app)).toBe(1);
      const [d] = await deliveriesOf(app, endpoint.id);
      expect(d).toMatchObject({ status: 'PENDING', attempts: 1, last_response_status: 302, last_error: 'HTTP 302: redirect not followed' });
      expect(secondsFromNow(app, d.next_attempt_at)).toBeGreaterThanOrEqual(4.5);
      expect(redirecting.of(eventId)).toHaveLength(1);
      expect(target.receipts).toEqual([]);
    } finally {
      await redirecting.down();
      await target.down();
    }
  });

  it('a receiver that never answers › the attempt ends at WEBHOOK_TIMEOUT_MS, recorded as a timeout, the next one scheduled', async () => {
    const hanging = await Receiver.start({ hang: true });
    try {
      const { reseller, pass } = await world(slow);
      const endpoint = await createEndpoint(slow, reseller, { url: hanging.url() });
      const { eventId } = await makeEvent(slow, reseller, pass);
      const started = Date.now();
      expect(await dispatch(slow)).toBe(1);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(5_000);
      let [d] = await deliveriesOf(slow, endpoint.id);
      expect(d).toMatchObject({
        status: 'PENDING',
        attempts: 1,
        last_response_status: null,
        last_error: 'timeout: no response within 300 ms',
      });
      expect(secondsFromNow(slow, d.next_attempt_at)).toBeGreaterThanOrEqual(4.5);
      expect(secondsFromNow(slow, d.next_attempt_at)).toBeLessThanOrEqual(5.5);
      expect(hanging.of(eventId)).toHaveLength(1);

      hanging.behaviour = { status: 200 };
      slow.clock.advance(5_500);
      expect(await dispatch(slow)).toBe(1);
      [d] = await deliveriesOf(slow, endpoint.id);
      expect(d).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
      expect(hanging.of(eventId)).toHaveLength(2);
    } finally {
      await hanging.down();
    }
  });
});

describe('secret rotation', () => {
  it('both secrets sign for 24 hours, then only the new one', async () => {
    const { reseller, pass } = await world();
    const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/rotating') });
    const rotated = await v3(app, `/webhook_endpoints/${endpoint.id}/rotate_secret`, { key: reseller.key, method: 'POST' });
    const [oldSecret, newSecret] = [endpoint.secret, rotated.body.secret as string];

    const during = await makeEvent(app, reseller, pass);
    await dispatch(app);
    const [first] = receiver.of(during.eventId);
    expect((first.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verifies(oldSecret, first)).toBe(true);
    expect(verifies(newSecret, first)).toBe(true);

    app.clock.advance(24 * 3600_000 - 1000);
    const lastSecond = await makeEvent(app, reseller, pass);
    await dispatch(app);
    const [second] = receiver.of(lastSecond.eventId);
    expect(verifies(oldSecret, second)).toBe(true);
    expect(verifies(newSecret, second)).toBe(true);

    app.clock.advance(2000);
    const after = await makeEvent(app, reseller, pass);
    await dispatch(app);
    const [third] = receiver.of(after.eventId);
    expect((third.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verifies(oldSecret, third)).toBe(false);
    expect(verifies(newSecret, third)).toBe(true);
  });
});

describe('private targets at delivery time', () => {
  it('refused when WEBHOOK_ALLOW_PRIVATE_URLS is off where the worker runs: nothing is sent, the attempt fails', async () => {
    const { reseller, pass } = await world();
    const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/private') });
    const { eventId } = await makeEvent(app, reseller, pass);
    // The fan-out as usual, then a worker without the setting.
    await fanOut(app);
    const strictConfig = { ...app.config, WEBHOOK_ALLOW_PRIVATE_URLS: false };
    expect(await deliverDueWebhooks(app.orm, { clock: app.clock, config: strictConfig, log })).toBe(1);
    expect(await deliveriesOf(app, endpoint.id)).toEqual([
      expect.objectContaining({
        status: 'PENDING',
        attempts: 1,
        last_response_status: null,
        last_error: 'refused: 127.0.0.1 is a private address (WEBHOOK_ALLOW_PRIVATE_URLS)',
      }),
    ]);
    expect(receiver.of(eventId)).toEqual([]);
  });

  it('a name that resolves to a private address › refused after DNS, nothing sent; allowed, the same URL is delivered', async () => {
    // The machine's own name, resolved for real (/etc/hosts): a private address, where a server listens.
    const host = os.hostname();
    const { address } = await dns.promises.lookup(host);
    expect(isPrivateAddress(address), `${host} resolves to ${address}`).toBe(true);
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      received.push(req.headers['webhook-id'] as string);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    try {
      const { reseller, pass } = await world();
      // A name is not resolved at registration: the strict setting accepts it.
      const endpoint = await createEndpoint(app, reseller, { url: `http://${host}:${(server.address() as AddressInfo).port}/dns` });
      const { eventId } = await makeEvent(app, reseller, pass);
      await fanOut(app);
      const strictConfig = { ...app.config, WEBHOOK_ALLOW_PRIVATE_URLS: false };
      expect(await deliverDueWebhooks(app.orm, { clock: app.clock, config: strictConfig, log })).toBe(1);
      const [refused] = await deliveriesOf(app, endpoint.id);
      expect(refused).toMatchObject({ status: 'PENDING', attempts: 1, last_response_status: null });
      expect(refused.last_error).toMatch(
        new RegExp(`^refused: ${host} resolves to the private address .+ \\(WEBHOOK_ALLOW_PRIVATE_URLS\\)$`),
      );
      expect(received).toEqual([]);

      app.clock.advance(6_000);
      expect(await deliverDueWebhooks(app.orm, { clock: app.clock, config: app.config, log })).toBe(1);
      expect(received).toEqual([eventId]);
      expect(await deliveriesOf(app, endpoint.id)).toEqual([expect.objectContaining({ status: 'SUCCEEDED', attempts: 2 })]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a name is checked on the addresses it resolves to, the ones the connection would use', async () => {
    const lookup = (allow: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
        guardedLookup(allow)('localhost', {}, (err, address) => resolve({ err, address }));
      });
    const refused = await lookup(false);
    expect(refused.err?.message).toMatch(
      /^refused: localhost resolves to the private address (127\.0\.0\.1|::1) \(WEBHOOK_ALLOW_PRIVATE_URLS\)$/,
    );
    const allowed = await lookup(true);
    expect(allowed.err).toBeNull();
    expect(allowed.address).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('a retry of another endpoint’s delivery › 404', async () => {
    const { reseller, pass } = await world();
    const a = await createEndpoint(app, reseller, { url: receiver.url('/a') });
    const b = await createEndpoint(app, reseller, { url: receiver.url('/b') });
    await makeEvent(app, reseller, pass);
    await dispatch(app);
    const [delivery] = await deliveriesOf(app, a.id);
    expectError(
      await v3(app, `/webhook_endpoints/${b.id}/deliveries/${delivery.id}/retry`, { key: reseller.key, method: 'POST' }),
      404,
      'resource_not_found',
    );
  });
});
