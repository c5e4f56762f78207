import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { createEndpoint, deliveriesOf, passFor, Receiver, verified } from '../support/webhooks.ts';
import { killStartedProcesses, Service } from '../ops/processes.ts';
import { until as waitUntilHolds } from '../support/until.ts';

// At least once across a crash (docs/partner-guide.md "Webhooks"): `serve` (node src/main.ts serve, background jobs
// in-process) is killed with SIGKILL after the business commit, before its event was delivered;
// a new `serve` on the same database delivers it. The test app serves only as the database and
// its factories.

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const T = 120_000;

afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
});

async function startServe(env: Record<string, string>): Promise<{ service: Service; base: string }> {
  const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env });
  await service.waitForStdout(/"msg":"listening"/, 90_000);
  return { service, base: service.logLines().find((l) => l.msg === 'listening')!.url as string };
}

async function issuePassOn(base: string, reseller: TestReseller, passId: string, email: string): Promise<string> {
  const res = await fetch(`${base}/v3/api/business/reseller/issued_passes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${reseller.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ pass_id: passId, first_name: 'Ada', last_name: 'Lovelace', email }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { client_id: clientId } = (await res.json()) as { client_id: string };
  const [event] = await app.sql<{ id: string }>("select id from event where payload->'data'->'object'->>'client_id' = ?", [clientId]);
  return event.id;
}

const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) => waitUntilHolds(check, what, timeoutMs);

const kill9 = async (service: Service) => {
  service.child.kill('SIGKILL');
  expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
};

describe('serve killed with SIGKILL', () => {
  it(
    'after the business commit, before the fan-out › the next serve delivers the event',
    async () => {
      const receiver = await Receiver.start();
      try {
        const reseller = await createReseller(app);
        const pass = await passFor(app, reseller);
        const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/fanout') });
        // A minute between outbox polls: the event is committed and waits in the outbox.
        const first = await startServe({ OUTBOX_POLL_MS: '60000' });
        const eventId = await issuePassOn(first.base, reseller, pass, 'crash.fanout@example.com');
        await kill9(first.service);
        expect(receiver.receipts).toEqual([]);
        const [outbox] = await app.sql<{ processed: boolean }>(
          "select processed_at is not null as processed from outbox where payload->>'id' = ?",
          [eventId],
        );
        expect(outbox.processed).toBe(false);

        const second = await startServe({ OUTBOX_POLL_MS: '100' });
        await until(() => receiver.of(eventId).length > 0, 'the event is delivered');
        expect(verified(endpoint.secret, receiver.of(eventId)[0])).toMatchObject({ id: eventId, type: 'issued_pass.created' });
        await until(async () => (await deliveriesOf(app, endpoint.id))[0]?.status === 'SUCCEEDED', 'the delivery is recorded');
        expect(await deliveriesOf(app, endpoint.id)).toEqual([
          expect.objectContaining({ event_id: eventId, status: 'SUCCEEDED', attempts: 1 }),
        ]);
        second.service.child.kill('SIGTERM');
        expect(await second.service.exited).toEqual({ code: 0, signal: null });
      } finally {
        await receiver.down();
      }
    },
    T,
  );

  it(
    'during the attempt (the receiver holds the request) › the lease runs out and the next serve delivers it',
    async () => {
      const receiver = await Receiver.start({ hang: true });
      try {
        const reseller = await createReseller(app);
        const pass = await passFor(app, reseller);
        const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/inflight') });
        // WEBHOOK_TIMEOUT_MS 2 s: a lease of 2 × 2 s + 10 s.
        const env = { OUTBOX_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '2000' };
        const first = await startServe(env);
        const eventId = await issuePassOn(first.base, reseller, pass, 'crash.inflight@example.com');
        await until(() => receiver.of(eventId).length === 1, 'the receiver holds the first attempt');
        await kill9(first.service);
        const [leased] = await app.sql<{ status: string; attempts: number; leased: boolean }>(
          'select status, attempts, locked_until > now() as leased from webhook_delivery where endpoint_id = ?',
          [endpoint.id],
        );
        expect(leased).toEqual({ status: 'PENDING', attempts: 1, leased: true });

        receiver.behaviour = { status: 200 };
        const startedAt = Date.now();
        const second = await startServe(env);
        await until(async () => (await deliveriesOf(app, endpoint.id))[0]?.status === 'SUCCEEDED', 'the delivery succeeds', 60_000);
        expect(Date.now() - startedAt).toBeLessThan(40_000);
        const receipts = receiver.of(eventId);
        expect(receipts).toHaveLength(2); // the attempt cut off by the crash, and the one that got its 200
        for (const r of receipts) verified(endpoint.secret, r);
        expect(await deliveriesOf(app, endpoint.id)).toEqual([
          expect.objectContaining({ status: 'SUCCEEDED', attempts: 2, last_response_status: 200 }),
        ]);
        second.service.child.kill('SIGTERM');
        expect(await second.service.exited).toEqual({ code: 0, signal: null });
      } finally {
        await receiver.down();
      }
    },
    T,
  );
});
