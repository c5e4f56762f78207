import { randomBytes } from 'node:crypto';
import type { Logger } from '../../platform/logger.ts';
import { DomainError, validationError } from '../../platform/errors.ts';
import type { Pipeline } from '../../platform/pipeline.ts';
import { originOf, resellerOf, type Ctx, type ResellerCaller } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { createAccessCode, confirmAccessCodeSession } from '../access-codes/index.ts';
import { coverageOf } from '../bookings/index.ts';
import { bookClass, bookSpa, confirmClassBooking, confirmSpaBooking, type Initiation } from '../bookings/index.ts';
import { upcomingOpenClasses } from '../classes/index.ts';
import { getOwnClient } from '../clients/index.ts';
import { currentPassOf, effectiveStatus, type PassPackage } from '../passes/index.ts';
import { getReseller } from '../resellers/index.ts';
import { getSpaAvailability, listSpaTreatments, spaOfService, type Slot, type SpaTreatment } from '../spa/index.ts';
import { completeSession, lockSession, sessionOfSecret, type HostedSession } from './hosted-sessions.service.ts';
import { hostedSessionStatus } from './hosted-sessions.entity.ts';
import { html, page, type Html } from './hosted-sessions.html.ts';
import { formToken, isFormTokenOf } from './form-token.ts';

// The hosted page (docs/partner-guide.md "Hosted sessions"): what the URL's secret opens. Transport-free: src/server.ts
// reads the request and writes the answer. The secret is the caller: it acts as the session's
// reseller for the session's one client and this one session, through the same pipeline and use
// cases as the API (bookings, access codes); nothing here takes a client id from the browser.

export interface PageRequest {
  method: string;
  secret: string;
  /** `class`, `spa` or `access-code` for a POST; undefined for the page itself. */
  action: string | undefined;
  query: URLSearchParams;
  form: URLSearchParams;
  host: string | undefined;
  /** The client's address: an unknown secret counts as a failed authentication (docs/operator-guide.md "Rate limits"). */
  address: string;
  /** The request's `Origin` and `Sec-Fetch-Site` headers: where a post came from. */
  origin: string | undefined;
  fetchSite: string | undefined;
  requestId: string;
  log: Logger;
}
export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const CLASS_DAYS = 14;
const CLASSES_SHOWN = 30;
const TREATMENTS_SHOWN = 100;

/** A refusal written for the client on the page rather than for a developer; its message is shown as it is. */
class ClientMessage extends DomainError {}

/** What a POST did, kept as the transaction's answer (pipeline.write) and rendered after it. */
type Outcome =
  | { kind: 'done'; location: string }
  | { kind: 'code'; code: string; qrCode: string; expiresAt: string; location: string }
  | { kind: 'gone'; status: number; title: string; message: string }
  | { kind: 'refused'; status: number; message: string };

export async function hostedPage(pipeline: Pipeline, req: PageRequest): Promise<PageResponse> {
  const nonce = randomBytes(16).toString('base64');
  const probe = pipeline.context({ kind: 'anonymous' }, { requestId: req.requestId, log: req.log });
  // Secrets cannot be guessed at speed: an address over its failed-authentication limit is refused first.
  await pipeline.checkAddress(req.address);
  const session = await sessionOfSecret(probe.em, req.secret);
  if (!session) await pipeline.failedAuthentication(req.address);
  if (!session)
    return gonePage(nonce, 404, 'This link is not valid', 'Check that you opened the whole link you were sent, or ask for a new one.');
  const closed = closedPage(session, probe.clock.now(), nonce);
  if (closed) return closed;
  const reseller = await getReseller(probe.em, session.resellerId);
  if (reseller.status !== 'ACTIVE')
    return gonePage(nonce, 403, 'This link is not available', 'Booking through this link is not available right now.', session);
  const caller: ResellerCaller = { kind: 'reseller', resellerId: reseller.id, apiKeyId: null, currency: reseller.currency.trim() };
  const ctx = pipeline.context(caller, { requestId: req.requestId, log: req.log, host: req.host });

  if (req.method === 'GET' || req.method === 'HEAD') {
    if (req.action !== undefined) return gonePage(nonce, 404, 'This link is not valid', 'This page does not exist.');
    return mainPage(ctx, session, req, nonce);
  }
  if (req.method !== 'POST')
    return {
      ...gonePage(nonce, 405, 'Not allowed', 'This page only takes GET and POST.'),
      headers: { ...htmlHeaders(nonce), Allow: 'GET, HEAD, POST' },
    };
  const act = actionOf(session, req.action);
  if (!act) return gonePage(nonce, 404, 'This link is not valid', 'This page does not exist.');
  if (!(await postedFromThePage(ctx, session, req))) {
    return gonePage(
      nonce,
      403,
      'This request was refused',
      'It did not come from this page. Open the page again and choose once more.',
      session,
    );
  }

  const result = await pipeline.write(
    ctx,
    () => '',
    async (tx) => ({ status: 200, body: await act(tx, session.id, req.form) }),
    (err) => ({ status: err.status, body: { kind: 'refused', status: err.status, message: friendly(err) } satisfies Outcome }),
  );
  const outcome = result.body as Outcome;
  switch (outcome.kind) {
    case 'done':
      return { status: 303, headers: { ...htmlHeaders(nonce, session), Location: outcome.location }, body: '' };
    case 'code':
      return codePage(outcome, nonce, session);
    case 'gone':
      return gonePage(nonce, outcome.status, outcome.title, outcome.message, session);
    case 'refused':
      return mainPage(ctx, session, req, nonce, outcome);
  }
}

/**
 * A post is the page's own: no `Origin` of another origin, no `Sec-Fetch-Site` but `same-origin`
 * or `none`, and a form token of this session. `Origin: null` is what browsers send for the page's
 * own posts under its `no-referrer` policy, so it alone refuses nothing; the token decides.
 */
async function postedFromThePage(ctx: Ctx, session: HostedSession, req: PageRequest): Promise<boolean> {
  const site = req.fetchSite?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  if (req.origin !== undefined && req.origin !== 'null' && req.origin !== new URL(originOf(ctx.config, req.host)).origin) return false;
  return isFormTokenOf(ctx.em, ctx.config, session.id, req.form.get(FORM_TOKEN), ctx.clock.now());
}

/** The form field that carries the page's form token. */
const FORM_TOKEN = 'form_token';

// ---- actions: each runs in one transaction holding the session's lock -------------------------

type Action = (tx: TxCtx, sessionId: string, form: URLSearchParams) => Promise<Outcome>;

function actionOf(session: HostedSession, action: string | undefined): Action | undefined {
  if (session.mode === 'booking' && action === 'class') return (tx, id, form) => inOpenSession(tx, id, (s) => bookAClass(tx, s, form));
  if (session.mode === 'booking' && action === 'spa') return (tx, id, form) => inOpenSession(tx, id, (s) => bookASpaSlot(tx, s, form));
  if (session.mode === 'access_code' && action === 'access-code') return (tx, id) => inOpenSession(tx, id, (s) => getACode(tx, s));
  return undefined;
}

/** Locks the session; a second submit waits here and then finds it finished (sent on to the same return). */
async function inOpenSession(tx: TxCtx, id: string, run: (s: HostedSession) => Promise<Outcome>): Promise<Outcome> {
  const session = await lockSession(tx, id);
  const status = hostedSessionStatus(session, tx.clock.now());
  if (status === 'COMPLETED' && session.bookingId) return { kind: 'done', location: returnTo(session) };
  if (status === 'COMPLETED')
    return { kind: 'gone', status: 410, title: 'This link was already used', message: 'Your access code was shown when you got it.' };
  if (status === 'EXPIRED') return { kind: 'gone', status: 410, title: 'This link has expired', message: 'Ask for a new link.' };
  return run(session);
}

async function bookAClass(tx: TxCtx, session: HostedSession, form: URLSearchParams): Promise<Outcome> {
  const made = await bookClass(tx, { class_instance_id: field(form, 'class_instance_id'), client_id: session.clientId });
  const booking = made.booking ?? (await confirmClassBooking(tx, made.session.id, classPurchase(session, made)));
  await completeSession(tx, session, { bookingId: booking.id });
  return { kind: 'done', location: returnTo(session) };
}

async function bookASpaSlot(tx: TxCtx, session: HostedSession, form: URLSearchParams): Promise<Outcome> {
  const serviceId = field(form, 'service_id');
  const spaId = await spaOfService(tx.em, serviceId);
  if (!spaId) throw new ClientMessage('validation_error', 'Please choose a treatment from the list.', { param: 'service_id' });
  const made = await bookSpa(tx, {
    spa_id: spaId,
    service_ids: [serviceId],
    date: field(form, 'date'),
    time: field(form, 'time'),
    client_id: session.clientId,
  });
  let booking = made.booking;
  if (!booking) {
    allowCopay(session, made.session!.copayAmount ?? 0);
    booking = await confirmSpaBooking(tx, made.session!.id);
  }
  await completeSession(tx, session, { bookingId: booking.id });
  return { kind: 'done', location: returnTo(session) };
}

async function getACode(tx: TxCtx, session: HostedSession): Promise<Outcome> {
  const made = await createAccessCode(tx, { client_id: session.clientId });
  const issued =
    made.issued ??
    (await confirmAccessCodeSession(
      tx,
      made.session.id,
      purchaseFor(
        session,
        made.session.kind === 'EXTRA_VISITS' ? 'EXTRA_VISITS' : 'COPAY',
        made.session.costPerVisit ?? null,
        made.copayOptions,
      ),
    ));
  await completeSession(tx, session, { accessCodeId: issued.accessCode.id });
  return {
    kind: 'code',
    code: issued.code,
    qrCode: issued.qrCode,
    expiresAt: issued.accessCode.expiresAt.toISOString(),
    location: returnTo(session),
  };
}

/** What a class session buys on the page: one extra visit, or the cheapest co-pay option, within the session's limits. */
function classPurchase(session: HostedSession, made: Extract<Initiation, { session: object }>) {
  return purchaseFor(
    session,
    made.session.kind === 'CLASS_EXTRA_VISITS' ? 'EXTRA_VISITS' : 'COPAY',
    made.session.costPerVisit ?? null,
    made.copayOptions,
  );
}

function purchaseFor(
  session: HostedSession,
  kind: 'EXTRA_VISITS' | 'COPAY',
  costPerVisit: number | null,
  options: { id: string; clientCopayAmount: number }[],
) {
  if (kind === 'EXTRA_VISITS') {
    allowCopay(session, costPerVisit ?? 0, "This month's visits of your pass are used up");
    return { number_of_visits: 1, duration: 'MONTHLY' as const };
  }
  const cheapest = [...options].sort((a, b) => a.clientCopayAmount - b.clientCopayAmount)[0];
  if (!cheapest)
    throw new ClientMessage('provider_not_covered', 'This is not included in your pass, and it cannot be booked through this link.');
  allowCopay(session, cheapest.clientCopayAmount);
  return { copay_package_id: cheapest.id };
}

/** A co-pay is paid by the reseller only when the session allows it and it is within `max_copay_amount`. */
function allowCopay(session: HostedSession, amount: number, why = 'This is not included in your pass'): void {
  if (!session.allowCopay || (session.maxCopayAmount !== null && session.maxCopayAmount !== undefined && amount > session.maxCopayAmount)) {
    throw new ClientMessage('provider_not_covered', `${why}, and it cannot be booked through this link.`);
  }
}

/** A form field the page's own forms always send; missing, the request did not come from them. */
function field(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (value === null || value === '')
    throw validationError(name, `The form did not send ${name}; open the page again and choose once more`);
  return value;
}

/** return_url with what happened added; the page's secret never goes there (Referrer-Policy: no-referrer too). */
function returnTo(session: HostedSession): string {
  const url = new URL(session.returnUrl);
  url.searchParams.set('hosted_session_id', session.id);
  url.searchParams.set('status', 'completed');
  if (session.bookingId) url.searchParams.set('booking_id', session.bookingId);
  if (session.accessCodeId) url.searchParams.set('access_code_id', session.accessCodeId);
  return url.toString();
}

/** The catalogue's message, or a plainer one where the code says more to a developer than to a client. */
function friendly(err: DomainError): string {
  if (err instanceof ClientMessage) return err.message;
  switch (err.code) {
    case 'class_full':
      return 'This class has just filled up. Please pick another one.';
    case 'slot_unavailable':
      return 'This time has just been taken. Please pick another one.';
    case 'already_booked':
      return 'You are already booked into this class.';
    case 'insufficient_balance':
      return 'This cannot be booked through this link right now.';
    case 'validation_error':
      return `Please check your choice: ${err.message}`;
    case 'provider_not_covered':
      return 'This is not included in your pass, and it cannot be booked through this link.';
    case 'pass_not_active':
      return 'Your pass is not active for this date.';
    case 'resource_not_found':
      return 'This is no longer available. Please pick another one.';
    default:
      return err.message;
  }
}

// ---- pages -----------------------------------------------------------------------------------

function htmlHeaders(nonce: string, session?: HostedSession): Record<string, string> {
  // The return URL's origin is a form target too: a POST's 303 goes there, and form-action governs redirects.
  const returnOrigin = session ? ` ${new URL(session.returnUrl).origin}` : '';
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy':
      `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:; ` +
      `form-action 'self'${returnOrigin}; base-uri 'none'; frame-ancestors 'none'`,
  };
}

function closedPage(session: HostedSession, now: Date, nonce: string): PageResponse | undefined {
  const status = hostedSessionStatus(session, now);
  if (status === 'COMPLETED') return gonePage(nonce, 410, 'This link was already used', 'You have finished here.', session);
  if (status === 'EXPIRED') return gonePage(nonce, 410, 'This link has expired', 'Ask for a new link.', session);
  return undefined;
}

/** A page for what went wrong before the page could be read (a body too large, a fault): never a stack trace. */
export function hostedErrorPage(status: number, message: string): PageResponse {
  const nonce = randomBytes(16).toString('base64');
  const title = status >= 500 ? 'Something went wrong' : 'This request could not be read';
  return gonePage(nonce, status, title, status >= 500 ? 'Please try again in a moment.' : message);
}

function gonePage(nonce: string, status: number, title: string, message: string, session?: HostedSession): PageResponse {
  const back = session ? html`<p><a href="${session.returnUrl}">Go back</a></p>` : undefined;
  return { status, headers: htmlHeaders(nonce, session), body: page(title, nonce, html`<h1>${title}</h1><p>${message}</p>${back}`) };
}

function codePage(outcome: Extract<Outcome, { kind: 'code' }>, nonce: string, session: HostedSession): PageResponse {
  const body = html`<h1>Your access code</h1>
<p>Show this code at the front desk. It works once, until ${outcome.expiresAt.slice(0, 10)}.</p>
<p><img class="qr" alt="QR code of your access code" src="${outcome.qrCode}"></p>
<p>Or tell them the code: <span class="code" aria-label="Access code ${outcome.code.split('').join(' ')}">${outcome.code}</span></p>
<p>It is shown only now: keep this page open or note the code.</p>
<p><a class="button" href="${outcome.location}">Continue</a></p>`;
  return { status: 200, headers: htmlHeaders(nonce, session), body: page('Your access code', nonce, body) };
}

async function mainPage(
  ctx: Ctx,
  session: HostedSession,
  req: PageRequest,
  nonce: string,
  refused?: Extract<Outcome, { kind: 'refused' }>,
): Promise<PageResponse> {
  const client = await getOwnClient(ctx, session.clientId);
  const held = await currentPassOf(ctx.em, client);
  const now = ctx.clock.now();
  if (!held || effectiveStatus(held.issuedPass, now) !== 'ACTIVE') {
    return gonePage(nonce, 409, 'Your pass is not active', 'There is nothing to book with it right now.', session);
  }
  const alert = refused ? html`<div class="alert" role="alert">${refused.message}</div>` : undefined;
  const passBox = html`<section class="pass" aria-labelledby="pass-h"><h2 id="pass-h">Your pass</h2>
<p><strong>${held.pass.name}</strong> for ${client.firstName} ${client.lastName}</p>
<p class="meta">Valid until ${held.issuedPass.expiresAt.toISOString().slice(0, 10)}</p></section>`;
  const title = session.mode === 'booking' ? 'Book with your pass' : 'Get your access code';
  const token = html`<input type="hidden" name="${FORM_TOKEN}" value="${await formToken(ctx.em, ctx.config, session.id, now)}">`;
  const content =
    session.mode === 'booking' ? await bookingSections(ctx, session, held.pass, req, now, token) : accessCodeSection(req.secret, token);
  return {
    status: refused?.status ?? 200,
    headers: htmlHeaders(nonce, session),
    body: page(
      title,
      nonce,
      html`<h1>${title}</h1>${alert}${passBox}${content}<p class="meta"><a href="${session.returnUrl}">Cancel and go back</a></p>`,
    ),
  };
}

function accessCodeSection(secret: string, token: Html): Html {
  return html`<section aria-labelledby="code-h"><h2 id="code-h">Access code</h2>
<p>Get a single-use code for one visit today. Show it at the front desk.</p>
<form method="post" action="/hosted/${secret}/access-code">${token}<button type="submit">Get my access code</button></form></section>`;
}

/**
 * What the page offers: classes and treatments the pass covers, and, when the session allows a
 * co-pay, the others that have a co-pay price within its limit (a class's co-pay options are
 * checked when it is booked). The rest could only be refused.
 */
async function bookingSections(
  ctx: Ctx,
  session: HostedSession,
  pass: PassPackage,
  req: PageRequest,
  now: Date,
  token: Html,
): Promise<Html> {
  const upcoming = await upcomingOpenClasses(ctx, new Date(now.getTime() + CLASS_DAYS * 86_400_000), CLASSES_SHOWN);
  const classes = upcoming.filter((c) => session.allowCopay || coverageOf(pass, c).covered);
  const classItems = classes.map((c) => {
    const when = localWhen(c.startsAt, c.timezone);
    return html`<li><strong>${c.className}</strong> at ${c.providerName}<br><span class="meta">${when} · ${c.spotsLeft} ${c.spotsLeft === 1 ? 'spot' : 'spots'} left</span>
<form method="post" action="/hosted/${req.secret}/class">${token}<input type="hidden" name="class_instance_id" value="${c.instanceId}">
<button type="submit" aria-label="Book ${c.className}, ${when}, at ${c.providerName}">Book</button></form></li>`;
  });
  const classSection = html`<section aria-labelledby="classes-h"><h2 id="classes-h">Classes</h2>
${classItems.length ? html`<p class="meta">The next classes with free spots.</p><ul>${classItems}</ul>` : html`<p>No classes with free spots in the next ${CLASS_DAYS} days.</p>`}</section>`;
  const treatments = (await listSpaTreatments(ctx, TREATMENTS_SHOWN)).filter((t) => offered(t, session, pass, resellerOf(ctx).currency));
  return html`${classSection}${await spaSection(ctx, treatments, req, now, token)}`;
}

function offered(t: SpaTreatment, session: HostedSession, pass: PassPackage, currency: string): boolean {
  if (coverageOf(pass, { category: 'SPA', tier: t.tier }).covered) return true;
  const max = session.maxCopayAmount ?? Infinity;
  return session.allowCopay && t.copayAmount !== null && t.currency === currency && t.copayAmount <= max;
}

async function spaSection(ctx: Ctx, treatments: SpaTreatment[], req: PageRequest, now: Date, token: Html): Promise<Html> {
  if (treatments.length === 0) return html``;
  const chosenId = req.query.get('service_id') ?? undefined;
  const date = req.query.get('date') ?? now.toISOString().slice(0, 10);
  const chosen = treatments.find((t) => t.serviceId === chosenId);
  const options = treatments.map(
    (t) =>
      html`<option value="${t.serviceId}"${t.serviceId === chosenId ? html` selected` : undefined}>${t.name} (${t.durationMinutes} min) at ${t.spaName}</option>`,
  );
  let times: Html | undefined;
  if (chosen) {
    let slots: Slot[] = [];
    let problem: string | undefined;
    try {
      slots = (await getSpaAvailability(ctx, chosen.spaId, { date, serviceIds: [chosen.serviceId] })).slots.filter((s) => s.available);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      problem = friendly(err);
    }
    const buttons = slots.map(
      (s) => html`<li><form method="post" action="/hosted/${req.secret}/spa">${token}
<input type="hidden" name="service_id" value="${chosen.serviceId}">
<input type="hidden" name="date" value="${date}"><input type="hidden" name="time" value="${s.time}">
<button type="submit" aria-label="Book ${chosen.name} at ${s.time} on ${date}">${s.time}</button></form></li>`,
    );
    times = problem
      ? html`<div class="alert" role="alert">${problem}</div>`
      : html`<h3>Times on ${date}</h3>${buttons.length ? html`<ul class="times">${buttons}</ul>` : html`<p>No free times that day.</p>`}`;
  } else if (chosenId !== undefined) {
    times = html`<div class="alert" role="alert">Please choose a treatment from the list.</div>`;
  }
  return html`<section aria-labelledby="spa-h"><h2 id="spa-h">Spa appointments</h2>
<form method="get" action="/hosted/${req.secret}">
<label for="service_id">Treatment</label><select id="service_id" name="service_id" required>${options}</select>
<label for="date">Date</label><input id="date" name="date" type="date" required value="${date}">
<p><button type="submit">Show times</button></p></form>${times}</section>`;
}

/** "Wed 25 Nov, 10:00" in the provider's zone: where the client will be. */
function localWhen(at: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
}
