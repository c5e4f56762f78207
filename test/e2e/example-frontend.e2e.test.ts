import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useApp } from '../support/app.ts';
import { launchChromium, type Chromium } from './chromium.ts';
import { provider, providerKey } from '../support/access-codes.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { asClient, clientSession } from '../support/client-sessions.ts';
import { v3 } from '../support/http.ts';

// The example partner frontend (examples/, docs/partner-guide.md "The example frontend") in a real
// browser: Debian's Chromium, as test/e2e/graphiql.e2e.test.ts drives it. A client session's token in
// the URL fragment; the page lists the client's bookings, books a class through the SDK and shows
// the provider's confirm live; refused tokens and bookings are shown as such.
const T = 120_000;

const app = useApp();
let browser: Chromium | undefined;
let w: BookingWorld;
let gymKey: string;

beforeAll(async () => {
  browser = await launchChromium();
  w = await createBookingWorld(app);
  gymKey = await providerKey(app, w.gym.id);
}, T);

afterAll(async () => {
  await browser?.close();
});

interface Opened {
  page: Page;
  /** Every request the page made, with its method and body. */
  requests: { url: string; method: string; body: string }[];
  /** Script errors and CSP violations the page reported. */
  problems: string[];
}

/** Opens the page with `#token=…` (or none), recording what it requests and any script error. */
async function openPage(fragment: { token: string; near?: string } | undefined): Promise<Opened> {
  const page = await browser!.context.newPage();
  const opened: Opened = { page, requests: [], problems: [] };
  page.on('request', (request) => {
    opened.requests.push({ url: request.url(), method: request.method(), body: request.postData() ?? '' });
  });
  page.on('pageerror', (error) => opened.problems.push(error.message));
  page.on('console', (message) => {
    if (/Content Security Policy|SyntaxError|TypeError/.test(message.text())) opened.problems.push(message.text());
  });
  const hash = fragment ? `#token=${fragment.token}${fragment.near ? `&near=${fragment.near}` : ''}` : '';
  await page.goto(`${app.baseUrl}/examples/${hash}`);
  return opened;
}

const statusOf = (page: Page, bookingId: string) => page.locator(`tr[data-booking-id="${bookingId}"] [data-field="status"]`).innerText();

/** The page talked to this gateway only, and never put the token in a URL (the fragment is the browser's own). */
function expectOwnOriginOnly(opened: Opened, token: string): void {
  expect(opened.requests.length).toBeGreaterThan(0);
  expect(opened.requests.filter((r) => new URL(r.url).origin !== app.baseUrl).map((r) => r.url)).toEqual([]);
  expect(opened.requests.filter((r) => r.url.includes(token)).map((r) => r.url)).toEqual([]);
  expect(opened.page.url()).not.toContain(token);
}

describe('the example frontend in Chromium', () => {
  it(
    "shows the client's bookings, books a class once on a double click, and shows the provider's confirm live",
    async () => {
      const earlier = await instanceIn(app, w.gym.classId, 30);
      const existing = await book.cls(app, w, { class_instance_id: earlier.id, client_id: w.client.id });
      expect(existing.status, existing.text).toBe(201);
      const existingId: string = existing.body.booking_id;
      const next = await instanceIn(app, w.gym.classId, 54);
      const session = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book'] });

      const opened = await openPage({ token: session.token, near: '52.52,13.405' });
      const { page } = opened;
      await expect.poll(() => page.locator('#client-name').innerText(), { timeout: 30_000 }).toBe('Ada Lovelace');
      // The world's providers are in Berlin: the classes near it, through `near`.
      expect(await page.locator('#classes-order').innerText()).toBe('Nearest first, within 50 km of 52.52, 13.405');
      const classesAsked = opened.requests.find((r) => r.body.includes('query ListClasses'));
      expect(JSON.parse(classesAsked!.body).variables).toEqual({ first: 10, instances: 5, near: { lat: 52.52, lon: 13.405 } });
      // The token alone told the page its client (currentClientSession); the client's reads name it.
      expect(opened.requests.filter((r) => r.body.includes('query GetCurrentSession'))).toHaveLength(1);
      const bookingsAsked = opened.requests.find((r) => r.body.includes('query ListBookings'));
      expect(JSON.parse(bookingsAsked!.body).variables).toEqual({ clientId: w.client.id, first: 20 });
      const existingRow = page.locator(`tr[data-booking-id="${existingId}"]`);
      await expect.poll(() => existingRow.innerText(), { timeout: 30_000 }).toMatch(/PENDING\s+Morning Flow\s+Silver Gym/);
      await expect.poll(() => page.locator('#booking-rows tr').count()).toBe(1);
      // The instance already booked is marked so; the next one can be booked.
      expect(await page.locator('#read-only').isVisible()).toBe(false);
      expect(await page.locator(`button[data-instance-id="${earlier.id}"]`).innerText()).toBe('Booked');
      expect(await page.locator(`button[data-instance-id="${earlier.id}"]`).isDisabled()).toBe(true);
      // The subscription is held by the gateway before the booking, so none of its events is missed.
      await expect.poll(() => page.locator('#live').innerText(), { timeout: 30_000 }).toBe('Live updates: on');
      // A reload would lose this: the status below must change in place.
      await page.evaluate(() => Object.assign(window, { notReloaded: true }));

      await page.locator(`button[data-instance-id="${next.id}"]`).dblclick();
      await expect.poll(() => page.locator('#booking-rows tr').count(), { timeout: 30_000 }).toBe(2);
      const made = await app.sql<{ id: string; status: string }>('select id, status from booking where class_instance_id = ?', [next.id]);
      expect(made).toEqual([{ id: expect.stringMatching(/^booking_/), status: 'PENDING' }]);
      const newId = made[0].id;
      expect(await statusOf(page, newId)).toBe('PENDING');
      const nextButton = page.locator(`button[data-instance-id="${next.id}"]`);
      await expect.poll(() => nextButton.innerText(), { timeout: 30_000 }).toBe('Booked');
      expect(await nextButton.isDisabled()).toBe(true);
      const bookRequests = opened.requests.filter((r) => r.method === 'POST' && r.body.includes('mutation BookClass'));
      expect(bookRequests).toHaveLength(1);
      // Through the API too: the client has the two bookings, one on the instance booked.
      const listed = await v3(app, `/clients/${w.client.id}/bookings`, { key: w.reseller.key });
      expect(listed.body.data.map((b: { id: string }) => b.id).sort()).toEqual([existingId, newId].sort());

      const confirmed = await provider(app, `/bookings/${newId}/confirm`, { key: gymKey, method: 'POST' });
      expect(confirmed.status, confirmed.text).toBe(200);
      await expect.poll(() => statusOf(page, newId), { timeout: 30_000 }).toBe('CONFIRMED');
      expect(await statusOf(page, existingId)).toBe('PENDING');
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

      expectOwnOriginOnly(opened, session.token);
      expect(opened.requests.filter((r) => new URL(r.url).pathname === '/graphql').length).toBeGreaterThan(0);
      expect(opened.problems).toEqual([]);
      await page.close();
    },
    T,
  );

  it('a class filled meanwhile › shows the refusal, and books nothing', async () => {
    const last = await instanceIn(app, w.gym.classId, 78, { capacity: 2, spotsTaken: 1 });
    const session = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book'] });
    const opened = await openPage({ token: session.token });
    const { page } = opened;
    const button = page.locator(`button[data-instance-id="${last.id}"]`);
    await button.waitFor({ state: 'visible', timeout: 30_000 });

    const other = await anotherClient(app, w, 'filled@example.com');
    const taken = await book.cls(app, w, { class_instance_id: last.id, client_id: other.id });
    expect(taken.status, taken.text).toBe(201);
    await button.click();
    await expect.poll(() => page.locator('#error').innerText(), { timeout: 30_000 }).toMatch(/^Not booked: .+ \(class_full\)$/);
    expect(await page.locator('#error').getAttribute('role')).toBe('alert');
    expect(await app.sql('select id from booking where class_instance_id = ? and client_id = ?', [last.id, w.client.id])).toEqual([]);
    // The list is read again: the class is full now.
    await expect.poll(() => button.isDisabled(), { timeout: 30_000 }).toBe(true);
    expect(await page.locator('#class-list ul li', { has: button }).innerText()).toMatch(/: 0 of 2 spots left\s+Book$/);
    expectOwnOriginOnly(opened, session.token);
    expect(opened.problems).toEqual([]);
    await page.close();
  });

  it('a read-only token › the classes without Book buttons, and a line saying the session may not book', async () => {
    const upcoming = await instanceIn(app, w.gym.classId, 90);
    const session = await clientSession(app, w.reseller.key, w.client.id);
    const opened = await openPage({ token: session.token, near: '52.52,13.405' });
    const { page } = opened;
    await expect.poll(() => page.locator('#class-list').innerText(), { timeout: 30_000 }).toContain(upcoming.localDate);
    expect(await page.locator('#read-only').isVisible()).toBe(true);
    expect(await page.locator('#class-list button').count()).toBe(0);
    expect(opened.requests.filter((r) => r.body.includes('mutation BookClass'))).toEqual([]);
    expectOwnOriginOnly(opened, session.token);
    expect(opened.problems).toEqual([]);
    await page.close();
  });

  it('a token that expired while the page was open › Book shows that the session expired, and books nothing', async () => {
    const later = await instanceIn(app, w.gym.classId, 102);
    const session = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book'], expires_in: 60 });
    const opened = await openPage({ token: session.token });
    const { page } = opened;
    const button = page.locator(`button[data-instance-id="${later.id}"]`);
    await button.waitFor({ state: 'visible', timeout: 30_000 });

    app.clock.advance(61_000);
    await button.click();
    await expect
      .poll(() => page.locator('#error').innerText(), { timeout: 30_000 })
      .toMatch(/^This session has expired or was revoked: ask for a new one\. \(invalid_client_session, request req_[0-9A-Za-z]+\)$/);
    expect(await app.sql('select id from booking where class_instance_id = ?', [later.id])).toEqual([]);
    expectOwnOriginOnly(opened, session.token);
    await page.close();
  });

  it('a revoked token › the page says so and offers the paste box, where a new session opens the client', async () => {
    const revoked = await clientSession(app, w.reseller.key, w.client.id);
    const deleted = await v3(app, `/client_sessions/${revoked.id}`, { key: w.reseller.key, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    // Every process refuses it within 1 s (docs/partner-guide.md "Client sessions"): wait until this one does.
    await expect
      .poll(async () => (await asClient(app, revoked.token, '{ passes(first: 1) { edges { cursor } } }')).status, { timeout: 10_000 })
      .toBe(401);

    const opened = await openPage({ token: revoked.token });
    const { page } = opened;
    await expect
      .poll(() => page.locator('#error').innerText(), { timeout: 30_000 })
      .toMatch(/^This session has expired or was revoked: ask for a new one\. \(invalid_client_session, request req_/);
    expect(await page.locator('#session').isVisible()).toBe(true);
    expect(await page.locator('#client').isVisible()).toBe(false);

    const fresh = await clientSession(app, w.reseller.key, w.client.id);
    await page.getByLabel('Client-session token').fill(fresh.token);
    // Tokyo: none of the world's classes (all in Berlin) is within 50 km.
    await page.getByLabel('Near (latitude, longitude), optional').fill('35.68, 139.76');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('#client-name').innerText(), { timeout: 30_000 }).toBe('Ada Lovelace');
    expect(await page.locator('#classes-order').innerText()).toBe('Nearest first, within 50 km of 35.68, 139.76');
    expect(await page.locator('#no-classes').isVisible()).toBe(true);
    expect(await page.locator('#class-list li').count()).toBe(0);
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(await page.locator('#session').isVisible()).toBe(false);
    expectOwnOriginOnly(opened, revoked.token);
    expectOwnOriginOnly(opened, fresh.token);
    await page.close();
  });
});
