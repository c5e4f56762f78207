import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderKey } from '../../src/modules/providers/index.ts';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { scanQr } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { killStartedProcesses, runCli, Service } from '../ops/processes.ts';

// Access codes on `serve` as an operator runs it (docs/partner-guide.md "Access codes"): the demo data lets a
// partner make one, production refuses to start without ACCESS_CODE_SIGNING_KEY and signs with it,
// and nothing the server logs, even at LOG_LEVEL=trace, shows a code or its QR payload.

const app = useApp();
let demo: DemoSeed;
beforeAll(async () => {
  demo = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
});
afterAll(async () => {
  await killStartedProcesses();
});

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('serve and access codes', () => {
  it('NODE_ENV=production without ACCESS_CODE_SIGNING_KEY › refuses to start, naming the setting', async () => {
    const run = await runCli(['serve'], {
      DATABASE_URL: app.databaseUrl,
      NODE_ENV: 'production',
      PORT: '0',
      ACCESS_CODE_SIGNING_KEY: undefined,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ACCESS_CODE_SIGNING_KEY: required when NODE_ENV is production/);
    const short = await runCli(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', ACCESS_CODE_SIGNING_KEY: 'c2hvcnQ=' });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/ACCESS_CODE_SIGNING_KEY: must be at least 32 bytes/);
  }, 60_000);

  it('a demo client gets a code and a provider redeems it; the trace log shows neither the code nor its payload', async () => {
    const service = new Service(['serve'], {
      DATABASE_URL: app.databaseUrl,
      NODE_ENV: 'production',
      ACCESS_CODE_SIGNING_KEY: KEY,
      PORT: '0',
      LOG_LEVEL: 'trace',
      OUTBOX_POLL_MS: '50',
    });
    await service.waitForStdout(/"msg":"listening"/);
    const base = service.logLines().find((l) => l.msg === 'listening')!.url as string;
    const [reseller] = demo.resellers;
    const alex = reseller.clients.find((c) => c.name === 'Alex Morgan')!;
    const post = async (path: string, key: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    const made = await post('/v3/api/business/reseller/access-codes', reseller.api_key, { client_id: alex.id });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ object: 'access_code', client_id: alex.id, provider_id: null, status: 'ACTIVE' });
    const payload = scanQr(made.body.qr_code);

    // Signed with the configured key: the provider's verification key is the one derived from it.
    const [gym] = await app.sql<{ id: string }>("select id from provider where category = 'GYM' and tier = 'GOLD' order by id limit 1");
    const providerKey = (await createProviderKey(app.orm.em.fork(), gym.id, app.clock.now())).secret;
    const key = (await (
      await fetch(`${base}/v3/api/provider/access-codes/verification-key`, { headers: { Authorization: `Bearer ${providerKey}` } })
    ).json()) as Record<string, string>;
    expect(key.kid).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.parse(Buffer.from(payload.split('.')[1], 'base64url').toString()).kid).toBe(key.kid);
    const unsigned = (await app.sql<{ n: number }>('select count(*)::int as n from access_code_signing_key'))[0].n;
    expect(unsigned).toBe(0); // the database keeps no key of its own when one is configured

    const redeemed = await post('/v3/api/provider/access-codes/redeem', providerKey, { code: payload });
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    expect(redeemed.body).toMatchObject({ id: made.body.id, status: 'REDEEMED', redeemed_provider_id: gym.id });
    expect((await post('/v3/api/provider/access-codes/redeem', providerKey, { code: made.body.code })).status).toBe(409);

    // A code of the demo's co-pay gym is a session to confirm.
    const copayGym = reseller.bookings.copay_class?.provider_id;
    if (copayGym) {
      const session = await post('/v3/api/business/reseller/access-codes', reseller.api_key, { client_id: alex.id, provider_id: copayGym });
      expect(session.body).toMatchObject({ object: 'access_code_session', copay_required: true });
    }

    await new Promise((r) => setTimeout(r, 500)); // let the outbox and the sweeps log what they do
    service.child.kill('SIGTERM');
    await service.exited;
    const logs = service.stdout + service.stderr;
    expect(logs.length).toBeGreaterThan(1000);
    for (const secret of [made.body.code, payload, payload.split('.')[1], payload.split('.')[2]]) expect(logs).not.toContain(secret);
  }, 90_000);
});
