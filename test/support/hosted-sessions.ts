import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import type { BookingWorld } from './bookings.ts';
import { registerDbTable } from './db-state.ts';
import { v3, type Reply } from './http.ts';

// Hosted sessions (docs/partner-guide.md "Hosted sessions"): created over the reseller API, then used by the
// client's browser on the page at their URL, which no API key opens. The page is HTML: a small
// parser here reads it back as a browser would (headings, forms with their fields and buttons,
// labels, alerts), and forms are submitted the way a browser submits them (urlencoded), without
// following redirects so the 303 and its Location can be checked.

registerDbTable(
  'hosted_session',
  'select id, status, completed_at, booking_id, access_code_id, updated_at from hosted_session order by id',
);

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** POST /hosted_sessions as the world's reseller. */
export const createHostedSession = (app: TestApp, world: BookingWorld, body: unknown, idempotencyKey?: string): Promise<Reply> =>
  v3(app, '/hosted_sessions', { key: world.reseller.key, body, idempotencyKey });

export interface OpenedSession {
  id: string;
  url: string;
  /** The URL's last segment, `hss_…`: what the page is opened with. */
  secret: string;
  body: Record<string, any>;
}

/** A session that must be created (201); with its secret. */
export async function openSession(app: TestApp, world: BookingWorld, body: Record<string, unknown>): Promise<OpenedSession> {
  const res = await createHostedSession(app, world, { mode: 'booking', return_url: 'https://shop.example.com/back', ...body });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, url: res.body.url, secret: secretOf(res.body.url), body: res.body };
}

/** The secret of a hosted session URL (`…/hosted/<secret>`). */
export function secretOf(url: string): string {
  const match = /\/hosted\/([^/?#]+)$/.exec(new URL(url).pathname);
  expect(match, url).not.toBeNull();
  return match![1];
}

/** The stored row of a hosted session. */
export async function sessionRow(app: TestApp, id: string) {
  const [row] = await app.sql<{ status: string; booking_id: string | null; access_code_id: string | null; completed_at: string | null }>(
    'select status, booking_id, access_code_id, completed_at from hosted_session where id = ?',
    [id],
  );
  return { ...row, completed_at: row.completed_at === null ? null : new Date(row.completed_at) };
}

export const hostedSessionCount = async (app: TestApp): Promise<number> =>
  Number((await app.sql<{ n: string }>('select count(*) as n from hosted_session'))[0].n);

/** A client's bookings, read through the API (GET /clients/{client_id}/bookings). */
export async function bookingsOf(app: TestApp, world: BookingWorld, clientId: string): Promise<Record<string, any>[]> {
  const res = await v3(app, `/clients/${clientId}/bookings?limit=100`, { key: world.reseller.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Events of one type the world's reseller can read (GET /events?type=…), newest first. */
export async function eventsOf(app: TestApp, world: BookingWorld, type: string): Promise<Record<string, any>[]> {
  const res = await v3(app, `/events?type=${type}&limit=100`, { key: world.reseller.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

// ---------------------------------------------------------------------------------------------
// The page over HTTP

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  doc: El;
  url: string;
}

/** A GET of the page (a path on the app or an absolute URL), as a browser sends it: no API key, redirects not followed. */
export async function getPage(app: TestApp, pathOrUrl: string): Promise<Page> {
  const url = new URL(pathOrUrl, app.baseUrl).href;
  const res = await fetch(url, { redirect: 'manual', headers: { Accept: 'text/html' } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, doc: parseHtml(text), url };
}

/** A urlencoded POST to the page's `action`, as a browser submits a form; redirects not followed. */
export async function postForm(app: TestApp, action: string, fields: Record<string, string> | [string, string][]): Promise<Page> {
  const url = new URL(action, app.baseUrl).href;
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, doc: parseHtml(text), url };
}

/**
 * A post as the page's own forms send it: `fields` beside the form token of the session's page,
 * rendered now (docs/partner-guide.md "Hosted sessions": a post without one of its session's is refused).
 */
export async function postFromPage(
  app: TestApp,
  secret: string,
  action: string,
  fields: Record<string, string> | [string, string][],
): Promise<Page> {
  const page = await getPage(app, `/hosted/${secret}`);
  const token = find(page.doc, (e) => e.tag === 'input' && e.attrs.name === 'form_token')[0]?.attrs.value;
  const entries = Array.isArray(fields) ? fields : Object.entries(fields);
  return postForm(app, `/hosted/${secret}/${action}`, [...entries, ...(token ? [['form_token', token] as [string, string]] : [])]);
}

/** Submits `form` (found on `page`) with `button` clicked, as a browser would: its fields, the button's name=value, `extra`. */
export async function submit(app: TestApp, page: Page, form: Form, button?: El, extra: [string, string][] = []): Promise<Page> {
  const fields: [string, string][] = [...form.fields];
  if (button?.attrs.name !== undefined) fields.push([button.attrs.name, button.attrs.value ?? '']);
  fields.push(...extra);
  const target = new URL(form.action, page.url);
  if (form.method === 'get') {
    target.search = new URLSearchParams(fields).toString();
    return getPage(app, target.href);
  }
  return postForm(app, target.href, fields);
}

/** What every answer of the page carries (docs/partner-guide.md "Hosted sessions"). */
export function expectPageHeaders(page: Page): void {
  expect(page.headers.get('content-type'), page.url).toBe('text/html; charset=utf-8');
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = find(page.doc, (e) => e.tag === 'html')[0];
  expect(html, 'an <html> element').toBeDefined();
  expect(html.attrs.lang).toBe('en');
}

/** The page loads nothing from elsewhere: every src/href is relative, data: or the return link. */
export function expectNoExternalAssets(page: Page, returnUrl?: string): void {
  const outside: string[] = [];
  for (const el of find(page.doc, (e) => e.attrs.src !== undefined || e.attrs.href !== undefined || e.attrs.srcset !== undefined)) {
    for (const value of [el.attrs.src, el.attrs.href, el.attrs.srcset].filter((v) => v !== undefined)) {
      if (value.startsWith('data:')) continue;
      if (returnUrl !== undefined && el.tag === 'a' && value.startsWith(returnUrl.split('?')[0])) continue;
      if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(value)) outside.push(`<${el.tag}> ${value}`);
    }
  }
  expect(outside).toEqual([]);
}

/** The text of the first <h1>. */
export const h1 = (page: Page): string | undefined => {
  const el = find(page.doc, (e) => e.tag === 'h1')[0];
  return el ? textOf(el) : undefined;
};

/** The text of every element with role="alert". */
export const alerts = (page: Page): string[] => find(page.doc, (e) => e.attrs.role === 'alert').map(textOf);

/** A 303 and where it points. */
export function redirectOf(page: Page): URL {
  expect(page.status, `${h1(page)}: ${alerts(page).join(' ') || page.text.slice(0, 500)}`).toBe(303);
  const location = page.headers.get('location');
  expect(location).toBeTruthy();
  return new URL(location!);
}

// ---------------------------------------------------------------------------------------------
// A small HTML reader: enough of the HTML syntax for a server-rendered page.

export interface El {
  tag: string;
  attrs: Record<string, string>;
  children: (El | string)[];
  parent?: El;
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title']);
/** Elements whose start tag closes an open one of the same kind (option, li, p, tr, td…). */
const SELF_CLOSING_SIBLINGS = new Set(['option', 'li', 'p', 'tr', 'td', 'th', 'dt', 'dd']);

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  hellip: '…',
  middot: '·',
  ndash: '–',
  mdash: '—',
  euro: '€',
  copy: '©',
};

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#')
      return String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

export function parseHtml(html: string): El {
  const root: El = { tag: '#root', attrs: {}, children: [] };
  let current = root;
  const token =
    /<!--[\s\S]*?-->|<![^>]*>|<\/([a-zA-Z][\w-]*)\s*>|<([a-zA-Z][\w-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  const text = (t: string) => {
    if (t) current.children.push(decodeEntities(t));
  };
  while ((m = token.exec(html))) {
    text(html.slice(last, m.index));
    last = token.lastIndex;
    if (m[1]) {
      const tag = m[1].toLowerCase();
      for (let el: El | undefined = current; el && el !== root; el = el.parent) {
        if (el.tag === tag) {
          current = el.parent!;
          break;
        }
      }
    } else if (m[2]) {
      const tag = m[2].toLowerCase();
      const attrs: Record<string, string> = {};
      for (const a of (m[3] ?? '').matchAll(ATTR)) attrs[a[1].toLowerCase()] = decodeEntities(a[2] ?? a[3] ?? a[4] ?? '');
      if (SELF_CLOSING_SIBLINGS.has(tag) && current.tag === tag) current = current.parent!;
      const el: El = { tag, attrs, children: [], parent: current };
      current.children.push(el);
      if (RAW_TEXT.has(tag)) {
        const end = html.toLowerCase().indexOf(`</${tag}`, last);
        const stop = end === -1 ? html.length : end;
        const raw = html.slice(last, stop);
        if (raw) el.children.push(tag === 'script' || tag === 'style' ? raw : decodeEntities(raw));
        const close = end === -1 ? html.length : html.indexOf('>', end) + 1;
        token.lastIndex = last = close;
      } else if (!VOID.has(tag) && m[4] !== '/') {
        current = el;
      }
    }
  }
  text(html.slice(last));
  return root;
}

/** Every element under `root` (depth first) that `test` accepts. */
export function find(root: El, test: (el: El) => boolean): El[] {
  const out: El[] = [];
  const walk = (el: El) => {
    for (const child of el.children) {
      if (typeof child === 'string') continue;
      if (test(child)) out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}

/** The text of an element, whitespace collapsed (script and style left out). */
export function textOf(el: El): string {
  const parts: string[] = [];
  const walk = (e: El) => {
    if (e.tag === 'script' || e.tag === 'style') return;
    for (const child of e.children) {
      if (typeof child === 'string') parts.push(child);
      else walk(child);
    }
  };
  walk(el);
  return parts.join('').replace(/\s+/g, ' ').trim();
}

const rootOf = (el: El): El => {
  let r = el;
  while (r.parent) r = r.parent;
  return r;
};

/** The accessible name, as assistive technology computes it for the elements the page uses. */
export function accessibleName(el: El): string {
  const root = rootOf(el);
  if (el.attrs['aria-labelledby']) {
    return el.attrs['aria-labelledby']
      .split(/\s+/)
      .map((id) =>
        find(root, (e) => e.attrs.id === id)
          .map(textOf)
          .join(' '),
      )
      .join(' ')
      .trim();
  }
  if (el.attrs['aria-label']) return el.attrs['aria-label'].trim();
  if (el.tag === 'img') return el.attrs.alt ?? '';
  if (el.tag === 'input' && ['submit', 'button', 'reset'].includes(el.attrs.type ?? '')) return el.attrs.value ?? '';
  if (['input', 'select', 'textarea'].includes(el.tag)) {
    const byFor = el.attrs.id ? find(root, (e) => e.tag === 'label' && e.attrs.for === el.attrs.id) : [];
    let wrapping: El | undefined;
    for (let p = el.parent; p; p = p.parent)
      if (p.tag === 'label') {
        wrapping = p;
        break;
      }
    const labels = [...byFor, ...(wrapping ? [wrapping] : [])];
    if (labels.length) return labels.map(textOf).join(' ').trim();
    return el.attrs.title ?? '';
  }
  return textOf(el);
}

const isButton = (e: El) => e.tag === 'button' || (e.tag === 'input' && ['submit', 'button'].includes(e.attrs.type ?? ''));

/** Buttons under `root` (button elements and submit inputs), with their accessible names. */
export const buttons = (root: El): El[] => find(root, isButton);

/** The one button named `name` (exactly, or matching a RegExp). */
export function buttonNamed(root: El, name: string | RegExp): El | undefined {
  return buttons(root).find((b) => (typeof name === 'string' ? accessibleName(b) === name : name.test(accessibleName(b))));
}

/** The one link named `name`. */
export function linkNamed(root: El, name: string): El | undefined {
  return find(root, (e) => e.tag === 'a' && e.attrs.href !== undefined).find((a) => accessibleName(a) === name);
}

/** A form control labelled `label` (input, select or textarea). */
export function controlLabelled(root: El, label: string): El | undefined {
  return find(root, (e) => ['input', 'select', 'textarea'].includes(e.tag) && !isButton(e) && (e.attrs.type ?? '') !== 'hidden').find(
    (e) => accessibleName(e) === label,
  );
}

export interface Form {
  el: El;
  action: string;
  method: 'get' | 'post';
  fields: [string, string][];
  buttons: El[];
}

/** A form with what a browser would send from it (without a clicked button). */
export function formOf(el: El): Form {
  const fields: [string, string][] = [];
  for (const control of find(el, (e) => ['input', 'select', 'textarea'].includes(e.tag))) {
    const name = control.attrs.name;
    if (name === undefined || control.attrs.disabled !== undefined || isButton(control)) continue;
    if (control.tag === 'select') {
      const options = find(control, (e) => e.tag === 'option');
      const chosen = options.find((o) => o.attrs.selected !== undefined) ?? options[0];
      if (chosen) fields.push([name, chosen.attrs.value ?? textOf(chosen)]);
    } else if (control.tag === 'textarea') {
      fields.push([name, textOf(control)]);
    } else if (['checkbox', 'radio'].includes(control.attrs.type ?? '')) {
      if (control.attrs.checked !== undefined) fields.push([name, control.attrs.value ?? 'on']);
    } else {
      fields.push([name, control.attrs.value ?? '']);
    }
  }
  return {
    el,
    action: el.attrs.action ?? '',
    method: (el.attrs.method ?? 'get').toLowerCase() === 'post' ? 'post' : 'get',
    fields,
    buttons: buttons(el),
  };
}

export const forms = (root: El): Form[] => find(root, (e) => e.tag === 'form').map(formOf);

/** The value of a field of a form (first of its name). */
export const fieldOf = (form: Form, name: string): string | undefined => form.fields.find(([n]) => n === name)?.[1];

/** The form whose button is named `name` (string: exactly; RegExp: matching). */
export function formWithButton(root: El, name: string | RegExp): { form: Form; button: El } | undefined {
  for (const form of forms(root)) {
    const button = buttonNamed(form.el, name);
    if (button) return { form, button };
  }
  return undefined;
}

/** The part of the page under the heading `title`: its enclosing <section>, else the heading's parent. */
export function sectionTitled(root: El, title: string): El | undefined {
  const heading = find(root, (e) => /^h[1-6]$/.test(e.tag)).find((h) => textOf(h) === title);
  if (!heading) return undefined;
  for (let p = heading.parent; p; p = p.parent) if (p.tag === 'section') return p;
  return heading.parent;
}

/** Where a form posts, as a path on the app. */
export const actionPath = (page: Page, form: Form): string => new URL(form.action, page.url).pathname;

/** The form with `name` set to `value` (replacing what the form holds, or added). */
export function withField(form: Form, name: string, value: string): Form {
  const has = form.fields.some(([n]) => n === name);
  return {
    ...form,
    fields: has ? form.fields.map(([n, v]) => [n, n === name ? value : v] as [string, string]) : [...form.fields, [name, value]],
  };
}
