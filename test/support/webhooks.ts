import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { deliverDueWebhooks, WEBHOOK_EVENT_TOPIC, webhookFanOut } from '../../src/modules/webhooks/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { dispatchOnce } from '../../src/platform/outbox.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { TestApp } from './app.ts';
import { registerDbTable } from './db-state.ts';
import { createPassPackage, issuePass, type TestReseller } from './factories.ts';
import { v3, type Reply } from './http.ts';

// Webhooks (docs/partner-guide.md "Webhooks"): a real node:http receiver on loopback that records every request
// as it arrived (raw body, headers), and the two steps of delivery run by hand with the app's
// clock: the outbox fan-out, then the delivery worker. Webhooks' tables join every dbState.

registerDbTable(
  'webhook_endpoint',
  'select id, url, enabled_events, status, description, secret, previous_secret, updated_at from webhook_endpoint order by id',
);
registerDbTable('webhook_delivery', 'select id, status, attempts, next_attempt_at, last_error from webhook_delivery order by id');
registerDbTable('event');

const log = createLogger({ LOG_LEVEL: 'silent' });

export interface Receipt {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers: a status (or one chosen per request), a redirect, or never (it keeps the request open). */
export type Behaviour = { status: number | ((receipt: Receipt) => number); delayMs?: number } | { redirectTo: string } | { hang: true };

/**
 * A webhook receiver on 127.0.0.1: it records every request, then answers as `behaviour` says.
 * `down()` closes it (connections are refused); `up()` listens again on the same port.
 */
export class Receiver {
  readonly receipts: Receipt[] = [];
  behaviour: Behaviour = { status: 200 };
  port = 0;
  private server?: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();

  static async start(behaviour: Behaviour = { status: 200 }): Promise<Receiver> {
    const r = new Receiver();
    r.behaviour = behaviour;
    await r.up();
    return r;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const receipt = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.receipts.push(receipt);
        const b = this.behaviour;
        if ('hang' in b) {
          this.hanging.add(res);
          res.on('close', () => this.hanging.delete(res));
          return;
        }
        if ('redirectTo' in b) {
          res.writeHead(302, { Location: b.redirectTo }).end();
          return;
        }
        const status = typeof b.status === 'function' ? b.status(receipt) : b.status;
        setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), b.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }

  /** Receipts for one event (`webhook-id`), in arrival order. */
  of(eventId: string): Receipt[] {
    return this.receipts.filter((r) => r.headers['webhook-id'] === eventId);
  }
}

/** The event a receipt carries, verified with `secret` by the public Standard Webhooks library (throws when it does not verify). */
export function verified(
  secret: string,
  receipt: Receipt,
): { id: string; type: string; object: string; data: { object: Record<string, any> } } {
  return new Webhook(secret).verify(receipt.body, receipt.headers as Record<string, string>) as never;
}

/** Whether `secret` verifies the receipt. */
export function verifies(secret: string, receipt: Receipt): boolean {
  try {
    verified(secret, receipt);
    return true;
  } catch {
    return false;
  }
}

/**
 * One round of delivery with the app's clock, as the background jobs run it: every pending `event`
 * outbox row fanned out, then every due delivery attempted once. Returns the attempts made.
 */
export async function dispatch(app: TestApp, orm: MikroORM = app.orm): Promise<number> {
  await fanOut(app, orm);
  return deliverDueWebhooks(orm, { clock: app.clock, config: app.config, log }, 100);
}

/** The first step alone: every pending `event` outbox row fanned out to deliveries; returns the rows handled. */
export async function fanOut(app: TestApp, orm: MikroORM = app.orm): Promise<number> {
  const handlers = { [WEBHOOK_EVENT_TOPIC]: webhookFanOut({ clock: app.clock, config: app.config, log }) };
  let total = 0;
  for (;;) {
    const handled = await dispatchOnce(orm, handlers, app.clock, log, 100);
    if (handled === 0) return total;
    total += handled;
  }
}

/**
 * Ends every delivery still pending, so a test's leftovers (due on a clock the next test sets
 * again) are not attempted in the next one. For afterEach.
 */
export async function settlePendingDeliveries(app: TestApp): Promise<void> {
  await app.sql("update webhook_delivery set status = 'FAILED', next_attempt_at = null where status = 'PENDING'");
}

export interface TestEndpoint {
  id: string;
  secret: string;
  url: string;
  enabled_events: string[];
}

/** POST /webhook_endpoints that must succeed. */
export async function createEndpoint(
  app: TestApp,
  reseller: TestReseller,
  body: { url: string; enabled_events?: string[]; description?: string },
): Promise<TestEndpoint> {
  const res = await v3(app, '/webhook_endpoints', { key: reseller.key, body: { enabled_events: ['*'], ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
}

/** The deliveries of an endpoint, oldest first, read from the database. */
export async function deliveriesOf(app: TestApp, endpointId: string): Promise<DeliveryRow[]> {
  return app.sql<DeliveryRow>(
    `select id, event_id, event_type, status, attempts, next_attempt_at, last_response_status, last_error
       from webhook_delivery where endpoint_id = ? order by id`,
    [endpointId],
  );
}

/** A reseller's pass package, so tests can make `issued_pass.created` events by issuing passes. */
export async function passFor(app: TestApp, reseller: TestReseller): Promise<string> {
  return (await createPassPackage(app, reseller)).id;
}

let clients = 0;

/** Issues a pass (one `issued_pass.created` event) and answers the event's id, read from GET /events. */
export async function makeEvent(app: TestApp, reseller: TestReseller, passId: string): Promise<{ eventId: string; clientId: string }> {
  const issued = await issuePass(app, reseller, passId, { email: `webhook.${++clients}.${Date.now()}@example.com` });
  const events: Reply = await v3(app, '/events?type=issued_pass.created&limit=1', { key: reseller.key });
  expect(events.body.data[0].data.object.client_id).toBe(issued.client_id);
  return { eventId: events.body.data[0].id, clientId: issued.client_id };
}
