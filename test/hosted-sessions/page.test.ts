import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { moduleSweeps } from '../../src/cli/serve.ts';
import { expireHostedSessions } from '../../src/modules/hosted-sessions/index.ts';
import { provider, providerKey, readmeVerifier, scanQr } from '../support/access-codes.ts';
import { useApp, type TestApp } from '../support/app.ts';
import { anotherClient, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { businessLedger } from '../support/factories.ts';
import {
  accessibleName,
  actionPath,
  alerts,
  bookingsOf,
  buttonNamed,
  controlLabelled,
  eventsOf,
  expectNoExternalAssets,
  expectPageHeaders,
  fieldOf,
  find,
  forms,
  formWithButton,
  getPage,
  h1,
  linkNamed,
  openSession,
  postForm,
  postFromPage,
  redirectOf,
  sectionTitled,
  sessionRow,
  sha256,
  submit,
  textOf,
  withField,
  type Form,
  type OpenedSession,
  type Page,
} from '../support/hosted-sessions.ts';
import { capturingLogger, useAppWithLog } from '../support/lookups.ts';

// The hosted page (docs/partner-guide.md "Hosted sessions"): what a client's browser gets at the session's URL,
// without an API key. Booking mode lists classes and spa times and books one; access-code mode
// hands out a code with its QR; either way the client is sent back to return_url with what was
// done, the session is COMPLETED once (hosted_session.completed), and the link is then used. A
// link's secret acts for its one session and client only, never reaches the log, and a session
// past its time answers 410 and is marked EXPIRED by the sweep (hosted_session.expired).

const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const RETURN = 'https://shop.example.com/back?order=42';
let clients = 0;
const newClient = () => anotherClient(app, w, `hosted${++clients}@example.com`);
const silent = pino({ level: 'silent' });

/** The class form of `instanceId` on a booking page. */
function classForm(page: Page, instanceId: string): Form | undefined {
  const section = sectionTitled(page.doc, 'Classes');
  expect(section, 'a section headed "Classes"').toBeDefined();
  return forms(section!).find((f) => fieldOf(f, 'class_instance_id') === instanceId);
}

/** Loads the page of `session` and submits the form of `instanceId` with its Book button. */
async function bookClass(session: OpenedSession, instanceId: string, className = 'Morning Flow'): Promise<Page> {
  const page = await getPage(app, session.url);
  expect(page.status, page.text.slice(0, 300)).toBe(200);
  const form = classForm(page, instanceId);
  expect(form, `a form for ${instanceId}`).toBeDefined();
  const button = form!.buttons.find((b) => accessibleName(b).startsWith(`Book ${className}`));
  expect(button, `a "Book ${className}…" button`).toBeDefined();
  return submit(app, page, form!, button);
}

/** The return_url the page sent the client to, with the parameters it added. */
function expectReturn(location: URL, params: Record<string, string | RegExp>): void {
  expect(`${location.origin}${location.pathname}`).toBe('https://shop.example.com/back');
  expect(location.searchParams.get('order')).toBe('42');
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string') expect(location.searchParams.get(name), name).toBe(value);
    else expect(location.searchParams.get(name), name).toMatch(value);
  }
}

const row = (id: string) => sessionRow(app, id);
const bookingRows = async (clientId: string) =>
  (await app.sql<{ id: string }>('select id from booking where client_id = ? order by id', [clientId])).map((r) => r.id);
const accessCodeRows = async (clientId: string) =>
  app.sql<{ id: string; code_hash: string }>('select id, code_hash from access_code where client_id = ? order by id', [clientId]);
const is4xx = (status: number) => status >= 400 && status < 500;

describe('GET /hosted/<secret> › booking mode', () => {
  it('an HTML page, no-store, no-referrer, default-src none, in English, loading nothing from elsewhere, with the pass and the classes of the next 14 days', async () => {
    const soon = await instanceIn(app, w.gym.classId, 26, { capacity: 10 });
    const later = await instanceIn(app, w.gym.classId, 13 * 24);
    const far = await instanceIn(app, w.gym.classId, 15 * 24);
    const started = await instanceIn(app, w.gym.classId, -1);
    const session = await openSession(app, w, { client_id: w.client.id, return_url: RETURN });
    const page = await getPage(app, session.url);
    expect(page.status, page.text.slice(0, 500)).toBe(200);
    expectPageHeaders(page);
    expectNoExternalAssets(page, RETURN);
    expect(h1(page)).toBe('Book with your pass');
    expect(textOf(page.doc)).toContain('Test Pass');

    const listed = forms(sectionTitled(page.doc, 'Classes')!).map((f) => fieldOf(f, 'class_instance_id'));
    expect(listed).toContain(soon.id);
    expect(listed).toContain(later.id);
    expect(listed).not.toContain(far.id);
    expect(listed).not.toContain(started.id);
    const form = classForm(page, soon.id)!;
    expect(form.method).toBe('post');
    expect(actionPath(page, form)).toBe(`/hosted/${session.secret}/class`);
    expect(form.buttons.map(accessibleName).some((n) => n.startsWith('Book Morning Flow'))).toBe(true);
  });

  it('booking a class: 303 to return_url with hosted_session_id, status=completed and booking_id; the booking is the client’s, the session COMPLETED with its event; the link is then used', async () => {
    const client = await newClient();
    const instance = await instanceIn(app, w.gym.classId, 26);
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
    const done = await bookClass(session, instance.id);
    const location = redirectOf(done);
    expectReturn(location, { hosted_session_id: session.id, status: 'completed', booking_id: /^\S+$/ });
    const bookingId = location.searchParams.get('booking_id')!;

    const bookings = await bookingsOf(app, w, client.id);
    expect(bookings).toEqual([
      expect.objectContaining({ id: bookingId, type: 'class', class_instance_id: instance.id, client_id: client.id }),
    ]);
    expect(await row(session.id)).toMatchObject({ status: 'COMPLETED', booking_id: bookingId, access_code_id: null, completed_at: NOW });

    const events = (await eventsOf(app, w, 'hosted_session.completed')).filter((e) => e.data.object.id === session.id);
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({
      object: 'hosted_session',
      id: session.id,
      client_id: client.id,
      status: 'COMPLETED',
      booking_id: bookingId,
      mode: 'booking',
    });
    expect(events[0].data.object).not.toHaveProperty('url');
    expect(JSON.stringify(events)).not.toContain(session.secret.slice(4));

    // The link is used: the page says so, and nothing more can be booked with it.
    const used = await getPage(app, session.url);
    expect(used.status).toBe(410);
    expectPageHeaders(used);
    expect(h1(used)).toBe('This link was already used');
    const other = await instanceIn(app, w.gym.classId, 30);
    const again = await postFromPage(app, session.secret, 'class', { class_instance_id: other.id });
    expect(again.status).toBe(410);
    expect(h1(again)).toBe('This link was already used');
    expect(await bookingRows(client.id)).toEqual([bookingId]);
  });

  it('a class full by the time the client books: an alert, nothing booked, the session stays OPEN and books another class', async () => {
    const client = await newClient();
    const full = await instanceIn(app, w.gym.classId, 28, { capacity: 2 });
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
    const page = await getPage(app, session.url);
    const form = classForm(page, full.id)!;
    await app.sql('update class_instance set spots_taken = 2 where id = ?', [full.id]);
    const refused = await submit(app, page, form, form.buttons[0]);
    expect(is4xx(refused.status), `${refused.status}: ${refused.text.slice(0, 300)}`).toBe(true);
    expectPageHeaders(refused);
    expect(alerts(refused).join(' ')).toBe('This class has just filled up. Please pick another one.');
    expect(await bookingRows(client.id)).toEqual([]);
    expect((await row(session.id)).status).toBe('OPEN');

    const other = await instanceIn(app, w.gym.classId, 32);
    const booked = redirectOf(await bookClass(session, other.id));
    expectReturn(booked, { status: 'completed', hosted_session_id: session.id });
    expect(await bookingRows(client.id)).toEqual([booked.searchParams.get('booking_id')]);
  });

  it('a form without a class or with an unknown one: an alert, nothing booked, the session stays OPEN', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id });
    const bodies: Record<string, string>[] = [{}, { class_instance_id: 'ci_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, { class_instance_id: '' }];
    for (const fields of bodies) {
      const res = await postFromPage(app, session.secret, 'class', fields);
      expect(is4xx(res.status), `${JSON.stringify(fields)}: ${res.status}`).toBe(true);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(alerts(res).join(' '), JSON.stringify(fields)).not.toBe('');
      expect(alerts(res).join(' '), JSON.stringify(fields)).not.toMatch(/ci_01|resource_not_found/);
    }
    expect(await bookingRows(client.id)).toEqual([]);
    expect((await row(session.id)).status).toBe('OPEN');
  });
});

describe('booking mode › a class the pass does not cover (co-pay 2500)', () => {
  async function refused(session: OpenedSession, clientId: string, instanceId: string) {
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await postFromPage(app, session.secret, 'class', { class_instance_id: instanceId });
    expect(is4xx(res.status), `${res.status}: ${res.text.slice(0, 300)}`).toBe(true);
    expectPageHeaders(res);
    // Written for the client: what went wrong, never the API's ids, codes or field names.
    expect(alerts(res).join(' ')).toBe('This is not included in your pass, and it cannot be booked through this link.');
    expect(await bookingRows(clientId)).toEqual([]);
    expect(await businessLedger(app, w.reseller.id)).toEqual(ledger);
    expect((await row(session.id)).status).toBe('OPEN');
  }

  it('without allow_copay › refused with an alert: nothing booked or debited', async () => {
    const client = await newClient();
    const instance = await instanceIn(app, w.copayGym.classId, 30);
    await refused(await openSession(app, w, { client_id: client.id }), client.id, instance.id);
  });

  it('allow_copay with max_copay_amount below the co-pay › refused with an alert: nothing booked or debited', async () => {
    const client = await newClient();
    const instance = await instanceIn(app, w.copayGym.classId, 30);
    await refused(await openSession(app, w, { client_id: client.id, allow_copay: true, max_copay_amount: 2499 }), client.id, instance.id);
  });

  for (const [title, body] of [
    ['allow_copay with max_copay_amount equal to the co-pay', { allow_copay: true, max_copay_amount: 2500 }],
    ['allow_copay without a maximum', { allow_copay: true }],
  ] as const) {
    it(`${title} › booked from the page, the co-pay debited from the business account`, async () => {
      const client = await newClient();
      const instance = await instanceIn(app, w.copayGym.classId, 30);
      const session = await openSession(app, w, { client_id: client.id, return_url: RETURN, ...body });
      const ledger = await businessLedger(app, w.reseller.id);
      const location = redirectOf(await bookClass(session, instance.id, 'Power Hour'));
      expectReturn(location, { hosted_session_id: session.id, status: 'completed' });
      const bookingId = location.searchParams.get('booking_id');
      expect(await bookingsOf(app, w, client.id)).toEqual([expect.objectContaining({ id: bookingId, class_instance_id: instance.id })]);
      const after = await businessLedger(app, w.reseller.id);
      expect(after.balance).toBe(ledger.balance - 2500);
      expect(after.ledgerSum).toBe(after.balance);
      expect((await row(session.id)).status).toBe('COMPLETED');
    });
  }
});

describe('booking mode › spa appointments', () => {
  async function timesPage(session: OpenedSession, serviceId: string, date: string): Promise<Page> {
    const page = await getPage(app, session.url);
    const spa = sectionTitled(page.doc, 'Spa appointments');
    expect(spa, 'a section headed "Spa appointments"').toBeDefined();
    const found = formWithButton(spa!, 'Show times');
    expect(found, 'a "Show times" form').toBeDefined();
    expect(found!.form.method).toBe('get');
    const times = await submit(app, page, withField(withField(found!.form, 'service_id', serviceId), 'date', date), found!.button);
    expect(times.status, times.text.slice(0, 300)).toBe(200);
    expect(new URL(times.url).pathname).toBe(`/hosted/${session.secret}`);
    return times;
  }
  const bookButtons = (page: Page, service: string) =>
    forms(page.doc)
      .flatMap((form) => form.buttons.map((button) => ({ form, button, name: accessibleName(button) })))
      .filter((b) => new RegExp(`^Book ${service} at \\d{2}:\\d{2}\\b`).test(b.name))
      .map((b) => ({ ...b, time: /at (\d{2}:\d{2})/.exec(b.name)![1] }));

  it('a GET form with Treatment and Date lists the free times; booking one sends the client back with its booking_id; the time is then taken', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
    const page = await getPage(app, session.url);
    const spa = sectionTitled(page.doc, 'Spa appointments')!;
    const treatment = controlLabelled(spa, 'Treatment');
    expect(treatment?.tag).toBe('select');
    expect(treatment!.attrs.name).toBe('service_id');
    expect(find(treatment!, (e) => e.tag === 'option').map((o) => o.attrs.value)).toContain(w.spa.massage);
    const date = controlLabelled(spa, 'Date');
    expect(date).toMatchObject({ tag: 'input', attrs: expect.objectContaining({ type: 'date', name: 'date' }) });
    expect(buttonNamed(spa, 'Show times')).toBeDefined();

    const times = await timesPage(session, w.spa.massage, '2026-03-04');
    expectPageHeaders(times);
    expectNoExternalAssets(times, RETURN);
    const offered = bookButtons(times, 'Massage');
    expect(offered.length).toBeGreaterThan(0);
    for (const { form, time } of offered) {
      expect(form.method).toBe('post');
      expect(actionPath(times, form)).toBe(`/hosted/${session.secret}/spa`);
      expect(fieldOf(form, 'service_id')).toBe(w.spa.massage);
      expect(fieldOf(form, 'date')).toBe('2026-03-04');
      expect(fieldOf(form, 'time')).toBe(time);
    }
    const ten = offered.find((o) => o.time === '10:00');
    expect(ten, 'the spa is open from 09:00 to 18:00: 10:00 is free').toBeDefined();

    const location = redirectOf(await submit(app, times, ten!.form, ten!.button));
    expectReturn(location, { hosted_session_id: session.id, status: 'completed' });
    const bookingId = location.searchParams.get('booking_id');
    expect(await bookingsOf(app, w, client.id)).toEqual([
      expect.objectContaining({
        id: bookingId,
        type: 'spa',
        date: '2026-03-04',
        time: '10:00',
        provider_id: w.spa.id,
        service_ids: [w.spa.massage],
      }),
    ]);
    expect(await row(session.id)).toMatchObject({ status: 'COMPLETED', booking_id: bookingId });

    expect(location.href).not.toContain(session.secret);

    // One room: another client no longer sees 10:00.
    const next = await openSession(app, w, { client_id: (await newClient()).id });
    const laterTimes = bookButtons(await timesPage(next, w.spa.massage, '2026-03-04'), 'Massage').map((b) => b.time);
    expect(laterTimes).not.toContain('10:00');
    expect(laterTimes.length).toBeGreaterThan(0);
  });
});

describe('booking mode › the spa form’s fields', () => {
  it('service_id, date and time are all a spa POST needs (the service names its spa)', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
    const location = redirectOf(
      await postFromPage(app, session.secret, 'spa', { service_id: w.spa.sauna, date: '2026-03-06', time: '10:00' }),
    );
    expectReturn(location, { hosted_session_id: session.id, status: 'completed' });
    expect(await bookingsOf(app, w, client.id)).toEqual([
      expect.objectContaining({
        id: location.searchParams.get('booking_id'),
        type: 'spa',
        provider_id: w.spa.id,
        date: '2026-03-06',
        time: '10:00',
      }),
    ]);
  });
});

describe('booking mode › a spa the pass does not cover (co-pay 1500 for the sauna)', () => {
  const sauna = () => ({ spa_id: w.copaySpa.id, service_id: w.copaySpa.sauna, date: '2026-03-05' });

  it('without allow_copay › refused with an alert: nothing booked or debited, the session stays OPEN', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id });
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await postFromPage(app, session.secret, 'spa', { ...sauna(), time: '11:00' });
    expect(is4xx(res.status), `${res.status}: ${res.text.slice(0, 300)}`).toBe(true);
    expectPageHeaders(res);
    expect(alerts(res).join(' ')).not.toBe('');
    expect(await bookingRows(client.id)).toEqual([]);
    expect(await businessLedger(app, w.reseller.id)).toEqual(ledger);
    expect((await row(session.id)).status).toBe('OPEN');
  });

  it('allow_copay within max_copay_amount › booked from the times list, the co-pay debited', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN, allow_copay: true, max_copay_amount: 1500 });
    const page = await getPage(app, `${session.url}?service_id=${w.copaySpa.sauna}&date=2026-03-05`);
    expect(page.status).toBe(200);
    const offered = formWithButton(page.doc, /^Book Sauna at 12:00\b/);
    expect(offered, 'a "Book Sauna at 12:00" button').toBeDefined();
    const ledger = await businessLedger(app, w.reseller.id);
    const location = redirectOf(await submit(app, page, offered!.form, offered!.button));
    expectReturn(location, { hosted_session_id: session.id, status: 'completed' });
    expect(await bookingsOf(app, w, client.id)).toEqual([
      expect.objectContaining({ id: location.searchParams.get('booking_id'), type: 'spa', provider_id: w.copaySpa.id, time: '12:00' }),
    ]);
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 1500);
  });
});

describe('booking mode › two submits at once (a double click)', () => {
  it('exactly one booking; the other answer is the same redirect or the used page', async () => {
    const client = await newClient();
    const instance = await instanceIn(app, w.gym.classId, 40, { capacity: 5 });
    const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
    const page = await getPage(app, session.url);
    const form = classForm(page, instance.id)!;
    const answers = await Promise.all([submit(app, page, form, form.buttons[0]), submit(app, page, form, form.buttons[0])]);
    const bookings = await bookingRows(client.id);
    expect(bookings).toHaveLength(1);
    const [spots] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [instance.id]);
    expect(spots.spots_taken).toBe(1);
    for (const answer of answers) {
      if (answer.status === 303) {
        expectReturn(new URL(answer.headers.get('location')!), {
          hosted_session_id: session.id,
          status: 'completed',
          booking_id: bookings[0],
        });
      } else {
        expect(answer.status, answer.text.slice(0, 300)).toBe(410);
        expect(h1(answer)).toBe('This link was already used');
      }
    }
    expect(answers.some((a) => a.status === 303)).toBe(true);
  });
});

describe('the secret acts for its one session and client', () => {
  it('fields naming another client or session are no way to book for them', async () => {
    const a = await newClient();
    const b = await newClient();
    const instance = await instanceIn(app, w.gym.classId, 44);
    const sessionA = await openSession(app, w, { client_id: a.id, return_url: RETURN });
    const sessionB = await openSession(app, w, { client_id: b.id, return_url: RETURN });
    const res = await postFromPage(app, sessionA.secret, 'class', [
      ['class_instance_id', instance.id],
      ['client_id', b.id],
      ['hosted_session_id', sessionB.id],
      ['user_pass_id', b.issuedPassId],
    ]);
    expect(await bookingRows(b.id)).toEqual([]);
    expect((await row(sessionB.id)).status).toBe('OPEN');
    if (res.status === 303) {
      // Booked, if at all, for A's client under A's session.
      const location = redirectOf(res);
      expect(location.searchParams.get('hosted_session_id')).toBe(sessionA.id);
      expect(await bookingRows(a.id)).toEqual([location.searchParams.get('booking_id')]);
    } else {
      expect(is4xx(res.status), String(res.status)).toBe(true);
      expect(await bookingRows(a.id)).toEqual([]);
    }
    // B's link still books for B.
    const location = redirectOf(await bookClass(sessionB, instance.id));
    expect(location.searchParams.get('hosted_session_id')).toBe(sessionB.id);
    expect(await bookingRows(b.id)).toEqual([location.searchParams.get('booking_id')]);
  });

  it('an access-code link with another client’s id gives no code to that client', async () => {
    const a = await newClient();
    const b = await newClient();
    const sessionA = await openSession(app, w, { client_id: a.id, mode: 'access_code', return_url: RETURN });
    const res = await postFromPage(app, sessionA.secret, 'access-code', [
      ['client_id', b.id],
      ['provider_id', w.gym.id],
    ]);
    expect(await accessCodeRows(b.id)).toEqual([]);
    if (res.status === 200) expect((await accessCodeRows(a.id)).length).toBe(1);
    else expect(is4xx(res.status), String(res.status)).toBe(true);
  });

  it('a booking link cannot get an access code; an access-code link cannot book', async () => {
    const client = await newClient();
    const booking = await openSession(app, w, { client_id: client.id, mode: 'booking' });
    const code = await openSession(app, w, { client_id: client.id, mode: 'access_code' });
    const instance = await instanceIn(app, w.gym.classId, 46);

    const noCode = await postForm(app, `/hosted/${booking.secret}/access-code`, {});
    expect(is4xx(noCode.status), String(noCode.status)).toBe(true);
    expect(noCode.headers.get('cache-control')).toBe('no-store');
    expect(await accessCodeRows(client.id)).toEqual([]);

    const noClass = await postForm(app, `/hosted/${code.secret}/class`, { class_instance_id: instance.id });
    expect(is4xx(noClass.status), String(noClass.status)).toBe(true);
    const noSpa = await postForm(app, `/hosted/${code.secret}/spa`, { service_id: w.spa.sauna, date: '2026-03-05', time: '10:00' });
    expect(is4xx(noSpa.status), String(noSpa.status)).toBe(true);
    expect(await bookingRows(client.id)).toEqual([]);

    expect((await row(booking.id)).status).toBe('OPEN');
    expect((await row(code.id)).status).toBe('OPEN');
    const codePage = await getPage(app, code.url);
    expect(h1(codePage)).toBe('Get your access code');
    expect(sectionTitled(codePage.doc, 'Classes')).toBeUndefined();
  });
});

describe('GET /hosted/<secret> › links that do not work', () => {
  it('an unknown or garbled secret › 404 "This link is not valid"', async () => {
    const session = await openSession(app, w, { client_id: w.client.id });
    const flipped = session.secret.slice(0, -1) + (session.secret.endsWith('A') ? 'B' : 'A');
    for (const path of [
      `/hosted/hss_${'A'.repeat(40)}`,
      `/hosted/${flipped}`,
      `/hosted/${session.secret}x`,
      `/hosted/${session.secret.slice(0, -1)}`,
      `/hosted/${session.secret.slice(4)}`,
      '/hosted/garbage',
      `/hosted/${session.secret.toLowerCase()}`,
    ]) {
      const page = await getPage(app, path);
      expect(page.status, path).toBe(404);
      expectPageHeaders(page);
      expect(h1(page), path).toBe('This link is not valid');
    }
    const post = await postForm(app, `/hosted/${flipped}/class`, { class_instance_id: (await instanceIn(app, w.gym.classId, 50)).id });
    expect(post.status).toBe(404);
    expect(h1(post)).toBe('This link is not valid');
  });

  it('past expires_at › 410 "This link has expired", and a form loaded before books nothing', async () => {
    const client = await newClient();
    const instance = await instanceIn(app, w.gym.classId, 30);
    const session = await openSession(app, w, { client_id: client.id, expires_in: 300 });
    app.clock.advance(299_000);
    const page = await getPage(app, session.url);
    expect(page.status).toBe(200);
    const form = classForm(page, instance.id)!;
    app.clock.advance(2_000);
    const expired = await getPage(app, session.url);
    expect(expired.status).toBe(410);
    expectPageHeaders(expired);
    expect(h1(expired)).toBe('This link has expired');
    const late = await submit(app, page, form, form.buttons[0]);
    expect(late.status).toBe(410);
    expect(h1(late)).toBe('This link has expired');
    expect(await bookingRows(client.id)).toEqual([]);
  });
});

describe('GET /hosted/<secret> › access-code mode', () => {
  it('"Get my access code" answers the code with its QR and a Continue link to return_url; the session is COMPLETED; the link is then used', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id, mode: 'access_code', return_url: RETURN });
    const page = await getPage(app, session.url);
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    expectNoExternalAssets(page, RETURN);
    expect(h1(page)).toBe('Get your access code');
    const found = formWithButton(page.doc, 'Get my access code');
    expect(found, 'a "Get my access code" form').toBeDefined();
    expect(found!.form.method).toBe('post');
    expect(actionPath(page, found!.form)).toBe(`/hosted/${session.secret}/access-code`);

    const result = await submit(app, page, found!.form, found!.button);
    expect(result.status, result.text.slice(0, 300)).toBe(200);
    expectPageHeaders(result);
    expectNoExternalAssets(result, RETURN);
    expect(h1(result)).toBe('Your access code');
    const [img] = find(result.doc, (e) => e.tag === 'img' && e.attrs.alt === 'QR code of your access code');
    expect(img, 'the QR image').toBeDefined();
    expect(img.attrs.src).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);

    const codes = await accessCodeRows(client.id);
    expect(codes).toHaveLength(1);
    const shown = (textOf(result.doc).match(/\b[A-Z0-9]{8}\b/g) ?? []).filter((c) => sha256(c) === codes[0].code_hash);
    expect(shown, 'the 8-character code is on the page').toHaveLength(1);
    const payload = scanQr(img.attrs.src);
    expect(payload.length).toBeGreaterThan(0);
    const key = (await provider(app, '/access-codes/verification-key', { key: await providerKey(app, w.gym.id) })).body;
    expect((await readmeVerifier())(payload, key, w.gym.id, app.clock.now().getTime())).toMatchObject({
      id: codes[0].id,
      code: shown[0],
      client_id: client.id,
    });

    const link = linkNamed(result.doc, 'Continue');
    expect(link, 'a "Continue" link').toBeDefined();
    expectReturn(new URL(link!.attrs.href), { hosted_session_id: session.id, status: 'completed', access_code_id: codes[0].id });
    expect(codes[0].id).toMatch(/^ac_/);

    expect(await row(session.id)).toMatchObject({ status: 'COMPLETED', access_code_id: codes[0].id, booking_id: null, completed_at: NOW });
    const events = (await eventsOf(app, w, 'hosted_session.completed')).filter((e) => e.data.object.id === session.id);
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({ status: 'COMPLETED', access_code_id: codes[0].id, mode: 'access_code' });
    expect(JSON.stringify(events)).not.toContain(shown[0]);

    const used = await getPage(app, session.url);
    expect(used.status).toBe(410);
    expect(h1(used)).toBe('This link was already used');
    const again = await submit(app, page, found!.form, found!.button);
    expect(again.status).toBe(410);
    expect(await accessCodeRows(client.id)).toHaveLength(1);
  });

  it('two clicks at once give one code', async () => {
    const client = await newClient();
    const session = await openSession(app, w, { client_id: client.id, mode: 'access_code' });
    const answers = await Promise.all([1, 2].map(() => postFromPage(app, session.secret, 'access-code', {})));
    expect(await accessCodeRows(client.id)).toHaveLength(1);
    for (const answer of answers) expect([200, 410], answer.text.slice(0, 300)).toContain(answer.status);
    expect(answers.some((a) => a.status === 200 && h1(a) === 'Your access code')).toBe(true);
  });
});

describe('expiry sweep', () => {
  it('expireHostedSessions marks OPEN sessions past expires_at EXPIRED once, each with hosted_session.expired; completed and young ones stay', async () => {
    const old = await openSession(app, w, { client_id: (await newClient()).id, expires_in: 300 });
    const young = await openSession(app, w, { client_id: (await newClient()).id, expires_in: 3600 });
    const client = await newClient();
    const done = await openSession(app, w, { client_id: client.id, expires_in: 300 });
    redirectOf(await bookClass(done, (await instanceIn(app, w.gym.classId, 48)).id));
    app.clock.advance(301_000);

    const deps = { clock: app.clock, config: app.config, log: silent };
    expect(await expireHostedSessions(app.orm.em, deps)).toBeGreaterThanOrEqual(1);
    expect((await row(old.id)).status).toBe('EXPIRED');
    expect((await row(young.id)).status).toBe('OPEN');
    expect((await row(done.id)).status).toBe('COMPLETED');
    const expiredEvents = async () => (await eventsOf(app, w, 'hosted_session.expired')).map((e) => e.data.object);
    const mine = (await expiredEvents()).filter((o) => [old.id, young.id, done.id].includes(o.id));
    expect(mine).toEqual([
      expect.objectContaining({ object: 'hosted_session', id: old.id, status: 'EXPIRED', completed_at: null, booking_id: null }),
    ]);
    expect(JSON.stringify(mine)).not.toContain(old.secret.slice(4));

    expect(await expireHostedSessions(app.orm.em, deps)).toBe(0);
    expect((await expiredEvents()).filter((o) => o.id === old.id)).toHaveLength(1);
    const page = await getPage(app, old.url);
    expect(page.status).toBe(410);
    expect(h1(page)).toBe('This link has expired');
  });

  // Last in the file: the background sweeps run on the real clock, over everything in this database.
  it('runs beside the booking-session sweep wherever the background jobs run', async () => {
    app.clock.set(new Date(Date.now() - 3600_000));
    const world = await createBookingWorld(app);
    const session = await openSession(app, world, { client_id: world.client.id, expires_in: 300 });
    for (const sweep of moduleSweeps(app.config, silent)) await sweep.run(app.orm);
    expect((await row(session.id)).status).toBe('EXPIRED');
    expect((await eventsOf(app, world, 'hosted_session.expired')).map((e) => e.data.object.id)).toEqual([session.id]);
  });
});

// The log (docs/partner-guide.md "Hosted sessions"): request lines name the page `/hosted/[secret]`, never the secret.
const logged = capturingLogger('debug');
const loggedApp = useAppWithLog(logged, { now: NOW });

/** A GET whose path is sent as written (fetch would resolve its dot segments first). */
function rawGet(app: TestApp, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.baseUrl}/`, { path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the log', () => {
  it('the secret in any spelling of the path or the query › never logged, and never a 500', async () => {
    const world = await createBookingWorld(loggedApp);
    const session = await openSession(loggedApp, world, { client_id: world.client.id, return_url: RETURN });
    const s = session.secret;
    const everyChar = [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    logged.lines.length = 0;
    const spellings = [
      `/hosted/${s}`,
      `/./hosted/${s}`,
      `/x/../hosted/${s}`,
      `/%68osted/${s}`,
      `//hosted/${s}`,
      `/hosted%2F${s}`,
      `/hosted/${everyChar}`,
      `/%2568osted/${s.replace('hss_', 'hss%255F')}`,
      `/hosted/./${s}/class`,
      `/elsewhere?next=${s}`,
      `/hosted/${s.slice(4)}`,
      `/graphql?token=${encodeURIComponent(s)}`,
    ];
    for (const path of spellings) expect(await rawGet(loggedApp, path), path).toBeLessThan(500);
    const text = logged.text();
    expect(logged.lines.length).toBeGreaterThanOrEqual(spellings.length);
    for (const leak of [s, s.slice(4), s.slice(4, 24), s.slice(-20), everyChar.slice(0, 30)]) expect(text).not.toContain(leak);
  });

  it('a whole flow at debug level, both modes, never logs a secret', async () => {
    const world = await createBookingWorld(loggedApp);
    const second = await anotherClient(loggedApp, world, 'logged@example.com');
    const instance = await instanceIn(loggedApp, world.gym.classId, 26);
    logged.lines.length = 0;

    const booking = await openSession(loggedApp, world, { client_id: world.client.id, return_url: RETURN });
    const page = await getPage(loggedApp, booking.url);
    expect(page.status).toBe(200);
    const form = forms(sectionTitled(page.doc, 'Classes')!).find((f) => fieldOf(f, 'class_instance_id') === instance.id)!;
    redirectOf(await submit(loggedApp, page, form, form.buttons[0]));
    expect((await getPage(loggedApp, booking.url)).status).toBe(410);
    expect((await postForm(loggedApp, `/hosted/${booking.secret}/class`, { class_instance_id: instance.id })).status).toBe(410);

    const code = await openSession(loggedApp, world, { client_id: second.id, mode: 'access_code', return_url: RETURN });
    const codePage = await getPage(loggedApp, code.url);
    const button = formWithButton(codePage.doc, 'Get my access code')!;
    expect((await submit(loggedApp, codePage, button.form, button.button)).status).toBe(200);
    const garbled = `${code.secret.slice(0, -1)}${code.secret.endsWith('Z') ? 'Y' : 'Z'}`;
    expect((await getPage(loggedApp, `/hosted/${garbled}`)).status).toBe(404);

    const text = logged.text();
    expect(logged.lines.length).toBeGreaterThanOrEqual(8);
    expect(text).toContain('/hosted/[secret]');
    for (const secret of [booking.secret, code.secret, garbled]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(4));
      expect(text).not.toContain(secret.slice(4, 24));
    }
  });
});
