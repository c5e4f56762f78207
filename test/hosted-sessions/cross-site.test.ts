import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { anotherClient, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { expectUnchanged } from '../support/assertions.ts';
import { dbState } from '../support/db-state.ts';
import {
  fieldOf,
  forms,
  getPage,
  h1,
  openSession,
  parseHtml,
  sectionTitled,
  sessionRow,
  type OpenedSession,
} from '../support/hosted-sessions.ts';

// docs/partner-guide.md "Hosted sessions": the page's forms take posts from the page only. Another Origin, a
// Sec-Fetch-Site other than same-origin (or none), or a form token that is not one of this
// session's pages' is a 403 page, and nothing is written. Origin: null alone refuses nothing:
// browsers send it for the page's own posts under its no-referrer policy (test/e2e drives that).
const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});
const RETURN = 'https://shop.example.com/back';
let clients = 0;

/** A booking session with its page's class form for a new instance: the fields a browser would post. */
async function pageForm(): Promise<{ session: OpenedSession; fields: [string, string][]; token: string }> {
  const client = await anotherClient(app, w, `cross${++clients}@example.com`);
  const instance = await instanceIn(app, w.gym.classId, 30 + clients);
  const session = await openSession(app, w, { client_id: client.id, return_url: RETURN });
  const page = await getPage(app, session.url);
  const form = forms(sectionTitled(page.doc, 'Classes')!).find((f) => fieldOf(f, 'class_instance_id') === instance.id)!;
  return { session, fields: form.fields, token: fieldOf(form, 'form_token')! };
}

async function post(session: OpenedSession, fields: [string, string][], headers: Record<string, string>) {
  const res = await fetch(`${app.baseUrl}/hosted/${session.secret}/class`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), doc: parseHtml(text) };
}

const withToken = (fields: [string, string][], token: string | undefined) => [
  ...fields.filter(([n]) => n !== 'form_token'),
  ...(token === undefined ? [] : [['form_token', token] as [string, string]]),
];

describe('a post that is not the page’s own', () => {
  const refusals: [
    string,
    (f: Awaited<ReturnType<typeof pageForm>>, other: string) => { fields?: [string, string][]; headers: Record<string, string> },
  ][] = [
    [
      'Origin https://evil.example and Sec-Fetch-Site cross-site',
      () => ({ headers: { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' } }),
    ],
    ['Origin https://evil.example, with the page’s token', () => ({ headers: { Origin: 'https://evil.example' } })],
    ['Origin null and Sec-Fetch-Site cross-site', () => ({ headers: { Origin: 'null', 'Sec-Fetch-Site': 'cross-site' } })],
    ['Sec-Fetch-Site same-site (a sibling subdomain is not the page)', () => ({ headers: { 'Sec-Fetch-Site': 'same-site' } })],
    ['no form token', (f) => ({ fields: withToken(f.fields, undefined), headers: { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' } })],
    [
      'another session’s token',
      (f, other) => ({ fields: withToken(f.fields, other), headers: { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' } }),
    ],
    ['a forged token', (f) => ({ fields: withToken(f.fields, `${Math.floor(NOW.getTime() / 1000)}.${'A'.repeat(43)}`), headers: {} })],
    [
      'a token of the page with its time changed',
      (f) => {
        const [issued, mac] = f.token.split('.');
        return { fields: withToken(f.fields, `${Number(issued) + 3600}.${mac}`), headers: {} };
      },
    ],
  ];
  for (const [what, make] of refusals) {
    it(`${what} › a 403 page; nothing booked, the session stays OPEN`, async () => {
      const form = await pageForm();
      const other = (await pageForm()).token;
      const { fields = form.fields, headers } = make(form, other);
      const before = await dbState(app);
      const res = await post(form.session, fields, headers);
      expect(res.status).toBe(403);
      expect(res.location).toBeNull();
      expect(h1({ doc: res.doc } as never)).toBe('This request was refused');
      await expectUnchanged(app, before);
      expect((await sessionRow(app, form.session.id)).status).toBe('OPEN');
    });
  }
});

describe('the page’s own post', () => {
  it('Origin null, Sec-Fetch-Site same-origin and its token › books (303 to return_url)', async () => {
    const { session, fields } = await pageForm();
    const res = await post(session, fields, { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' });
    expect(res.status).toBe(303);
    expect(res.location).toMatch(/^https:\/\/shop\.example\.com\/back\?.*status=completed/);
    expect((await sessionRow(app, session.id)).status).toBe('COMPLETED');
  });

  it('Origin of the page itself, and a client that sends neither header › books', async () => {
    const first = await pageForm();
    expect((await post(first.session, first.fields, { Origin: app.baseUrl, 'Sec-Fetch-Site': 'same-origin' })).status).toBe(303);
    const second = await pageForm();
    expect((await post(second.session, second.fields, {})).status).toBe(303);
  });
});
