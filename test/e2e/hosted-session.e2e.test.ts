import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { scanQr } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { launchChromium, type Chromium } from './chromium.ts';
import { createBookingWorld, instanceIn } from '../support/bookings.ts';
import { bookingsOf, createHostedSession } from '../support/hosted-sessions.ts';

// A hosted session's page in a real browser (docs/partner-guide.md "Hosted sessions"): Debian's Chromium
// (`apt-get install chromium`), as in graphiql.e2e.test.ts. The client opens the URL the API
// answered, books (or gets an access code) with the mouse and the keyboard, and lands on the
// reseller's return_url: here a small receiver on 127.0.0.1.
const SCREENSHOT = fileURLToPath(new URL('../../test-results/hosted-session.png', import.meta.url));

// jsqr is CommonJS with a `default` in its types (as in test/support/access-codes.ts).
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

const app = useApp();
let browser: Chromium | undefined;
let receiver: http.Server | undefined;
let receiverOrigin: string;
const returned: string[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    returned.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('Thanks');
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  receiverOrigin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise((r) => receiver!.close(r));
    }
  }
});

/** A new tab that records every URL it requests, and the headers of each form it posts. */
async function newPage(): Promise<{ page: Page; requested: string[]; posted: Record<string, string>[] }> {
  const page = await browser!.context.newPage();
  const requested: string[] = [];
  const posted: Record<string, string>[] = [];
  page.on('request', (request) => {
    requested.push(request.url());
    if (request.method() === 'POST') void request.allHeaders().then((headers) => posted.push(headers));
  });
  return { page, requested, posted };
}

/** Requests that left 127.0.0.1 (data: and blob: stay in the page). */
const elsewhere = (requested: string[]) => requested.filter((url) => !/^(data|blob):/.test(url) && new URL(url).hostname !== '127.0.0.1');

describe('a hosted session in Chromium', () => {
  it(
    'booking mode: the page shows the pass and the class; Tab reaches its Book button; a click books and lands on return_url',
    { timeout: 90_000 },
    async () => {
      const w = await createBookingWorld(app);
      const instance = await instanceIn(app, w.gym.classId, 26);
      const created = await createHostedSession(app, w, {
        client_id: w.client.id,
        mode: 'booking',
        return_url: `${receiverOrigin}/return?order=7`,
      });
      expect(created.status, created.text).toBe(201);
      const { page, requested, posted } = await newPage();

      const loaded = await page.goto(created.body.url);
      expect(loaded?.status()).toBe(200);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Book with your pass');
      expect(await page.getByText('Test Pass').first().isVisible()).toBe(true);
      const form = page.locator(`form:has(input[name="class_instance_id"][value="${instance.id}"])`);
      const book = form.getByRole('button', { name: /^Book Morning Flow/ });
      await book.waitFor({ state: 'visible', timeout: 15_000 });
      expect(await page.getByRole('heading', { name: 'Classes' }).isVisible()).toBe(true);

      fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(fs.statSync(SCREENSHOT).size).toBeGreaterThan(1000);

      // The keyboard reaches the Book button.
      let reached = false;
      for (let i = 0; i < 60 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached = await book.evaluate((el) => el === document.activeElement);
      }
      expect(reached, 'Tab reaches the Book button').toBe(true);

      await book.click();
      await page.waitForURL((url) => url.origin === receiverOrigin && url.pathname === '/return', { timeout: 30_000 });
      const landed = new URL(page.url());
      expect(landed.searchParams.get('order')).toBe('7');
      expect(landed.searchParams.get('status')).toBe('completed');
      expect(landed.searchParams.get('hosted_session_id')).toBe(created.body.id);
      const bookingId = landed.searchParams.get('booking_id');
      expect(bookingId).toBeTruthy();
      expect(await page.locator('body').innerText()).toContain('Thanks');
      expect(returned.some((u) => u.startsWith('/return?'))).toBe(true);

      const bookings = await bookingsOf(app, w, w.client.id);
      expect(bookings).toEqual([expect.objectContaining({ id: bookingId, type: 'class', class_instance_id: instance.id })]);
      // What Chromium sends with the page's own post, which the page takes (docs/partner-guide.md "Hosted sessions"):
      // Origin null under the page's no-referrer policy, Sec-Fetch-Site same-origin, and the form token.
      expect(posted).toHaveLength(1);
      expect(posted[0]).toMatchObject({ origin: 'null', 'sec-fetch-site': 'same-origin' });

      // Everything the page loaded came from the gateway (and the receiver), both on 127.0.0.1.
      expect(elsewhere(requested)).toEqual([]);
      expect(requested.some((u) => u.startsWith(app.baseUrl))).toBe(true);
      await page.close();
    },
  );

  it('access-code mode: "Get my access code" shows a QR that decodes; Continue lands on return_url', { timeout: 90_000 }, async () => {
    const w = await createBookingWorld(app);
    const created = await createHostedSession(app, w, {
      client_id: w.client.id,
      mode: 'access_code',
      return_url: `${receiverOrigin}/code`,
    });
    expect(created.status, created.text).toBe(201);
    const { page, requested } = await newPage();

    await page.goto(created.body.url);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Get your access code');
    await page.getByRole('button', { name: 'Get my access code' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText(), { timeout: 15_000 }).toBe('Your access code');

    const qr = page.getByRole('img', { name: 'QR code of your access code' });
    await qr.waitFor({ state: 'visible' });
    expect(await qr.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0)).toBe(true);
    const src = await qr.getAttribute('src');
    expect(src).toMatch(/^data:image\/png;base64,/);
    const payload = scanQr(src!);
    expect(payload.length).toBeGreaterThan(0);
    // As shown: the rendered image reads the same.
    const shot = PNG.sync.read(await qr.screenshot());
    const rendered = jsQR(Uint8ClampedArray.from(shot.data), shot.width, shot.height);
    expect(rendered?.data).toBe(payload);

    await page.getByRole('link', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === receiverOrigin && url.pathname === '/code', { timeout: 30_000 });
    const landed = new URL(page.url());
    expect(landed.searchParams.get('status')).toBe('completed');
    expect(landed.searchParams.get('hosted_session_id')).toBe(created.body.id);
    expect(landed.searchParams.get('access_code_id')).toMatch(/^ac_/);
    const [row] = await app.sql<{ status: string; access_code_id: string }>(
      'select status, access_code_id from hosted_session where id = ?',
      [created.body.id],
    );
    expect(row).toEqual({ status: 'COMPLETED', access_code_id: landed.searchParams.get('access_code_id') });

    expect(elsewhere(requested)).toEqual([]);
    await page.close();
  });
});
