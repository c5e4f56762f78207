import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.ts';
import { buildServer } from '../../src/server.ts';
import { startApp, UNLIMITED, type TestApp } from '../support/app.ts';
import { providerKey, redeem } from '../support/access-codes.ts';
import { createBookingWorld } from '../support/bookings.ts';
import { createReseller } from '../support/factories.ts';
import { call, gql, v3, type Reply } from '../support/http.ts';
import { capturingLogger } from '../support/lookups.ts';
import { runCli } from '../ops/processes.ts';

// docs/operator-guide.md "Rate limits" (decisions §14): per API key, per client address for failed
// authentication, per provider key for redeems; 429 rate_limited with Retry-After and the RateLimit
// fields; shared through Redis; Redis down fails open with one log line.

const opened: { close(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

async function appWith(overrides: Record<string, string>): Promise<TestApp> {
  const app = await startApp({ ...UNLIMITED, ...overrides });
  opened.push(app);
  return app;
}

/** Another server on `app`'s database, with its own settings and limiter (another process, as far as limits go). */
async function serverBeside(app: TestApp, overrides: Record<string, string>, log = capturingLogger('info').log): Promise<string> {
  const config = configWith({ DATABASE_URL: app.databaseUrl, ...UNLIMITED, ...overrides });
  const server = buildServer({ orm: app.orm, config, clock: app.clock, log });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const passes = (app: TestApp, key: string, headers: Record<string, string> = {}) => v3(app, '/passes', { key, headers });
const burst = (n: number, send: () => Promise<Reply>) => Promise.all(Array.from({ length: n }, send));
const statuses = (replies: Reply[]) => replies.map((r) => r.status);

function expectLimited(res: Reply, kind: string): void {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get('ratelimit-policy')).toMatch(new RegExp(`^"${kind}";q=\\d+;w=\\d+$`));
  expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"${kind}";r=0;t=[1-9]\\d*$`));
}

/** Polls until `send` answers `status`, within `seconds`; the limits refill on the real clock. */
async function eventually(send: () => Promise<Reply>, status: number, seconds = 15): Promise<Reply> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const res = await send();
    if (res.status === status || Date.now() > until) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('per API key', () => {
  it('over its burst › 429 with Retry-After and RateLimit fields, on REST and GraphQL; another reseller’s key is unaffected; it recovers', async () => {
    // One a second: the GraphQL request below must still find the bucket empty after the burst and
    // another key's request, however slowly a loaded machine sends them.
    const app = await appWith({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '10' });
    const a = await createReseller(app);
    const b = await createReseller(app);
    const replies = await burst(40, () => passes(app, a.key));
    expect(statuses(replies).filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
    expect(statuses(replies).filter((s) => s === 200).length).toBeLessThanOrEqual(20);
    expectLimited(
      replies.find((r) => r.status === 429)!,
      'key',
    );
    expect((await passes(app, b.key)).status).toBe(200);
    const graphql = await gql(app, a.key, '{ __typename }');
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors?.[0].extensions).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
    expect(graphql.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect((await eventually(() => passes(app, a.key), 200)).status).toBe(200);
  });

  it('a burst past the bucket › at most its 200 and the refill pass, the rest 429', async () => {
    // 10 a second, not the default 100: on a busy machine the 600 requests can take longer than a
    // 100-a-second refill needs to pass them all, and none would be refused; at 10 some always are.
    const app = await appWith({ RATE_LIMIT_PER_SECOND: '10', RATE_LIMIT_BURST: '200' });
    const r = await createReseller(app);
    const started = performance.now();
    const replies = await burst(600, () => passes(app, r.key));
    const seconds = (performance.now() - started) / 1000;
    const ok = statuses(replies).filter((s) => s === 200).length;
    expect(ok).toBeGreaterThanOrEqual(200);
    // The bucket refills on the real clock while the burst is answered: at most its 200 and 10 for
    // each second the burst took.
    expect(ok, `${seconds.toFixed(2)} s for 600 requests`).toBeLessThanOrEqual(200 + Math.ceil(10 * seconds));
    expect(replies.find((x) => x.status === 429)!.headers.get('ratelimit-policy')).toBe('"key";q=200;w=20');
  });

  it('the operator sets a reseller’s own limit (resellers limits), and --default clears it', async () => {
    const app = await appWith({ RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
    const r = await createReseller(app);
    const set = await runCli(['resellers', 'limits', r.id, '--per-second', '2', '--burst', '4'], { DATABASE_URL: app.databaseUrl });
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ id: r.id, rate_limit_per_second: 2, rate_limit_burst: 4 });
    await new Promise((resolve) => setTimeout(resolve, 600)); // the key cache's 500 ms
    const limited = await burst(20, () => passes(app, r.key));
    expect(statuses(limited).filter((s) => s === 200).length).toBeLessThanOrEqual(8);
    expect(limited.find((x) => x.status === 429)!.headers.get('ratelimit-policy')).toBe('"key";q=4;w=2');
    const cleared = await runCli(['resellers', 'limits', r.id, '--default'], { DATABASE_URL: app.databaseUrl });
    expect(JSON.parse(cleared.stdout)).toEqual({ id: r.id, rate_limit_per_second: null, rate_limit_burst: null });
    const bad = await runCli(['resellers', 'limits', r.id, '--per-second', '5', '--burst', '2'], { DATABASE_URL: app.databaseUrl });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/usage: resellers limits/);
  });
});

describe('failed authentication per client address', () => {
  it('past its burst › 429 even for a valid key; it recovers', async () => {
    const app = await appWith({ RATE_LIMIT_FAILED_AUTH_PER_SECOND: '2', RATE_LIMIT_FAILED_AUTH_BURST: '6' });
    const r = await createReseller(app);
    const guesses = [];
    for (let i = 0; i < 12; i++)
      guesses.push(await passes(app, `sk_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`));
    expect(guesses[0].status).toBe(401);
    const limited = guesses.find((g) => g.status === 429);
    expect(limited, JSON.stringify(statuses(guesses))).toBeDefined();
    expectLimited(limited!, 'failed_auth');
    expectLimited(await passes(app, r.key), 'failed_auth');
    // A hosted page's unknown secret counts too, and is refused the same way while the address is over.
    expect((await call(app, `/hosted/hss_${'x'.repeat(40)}`)).status).toBe(429);
    expect((await eventually(() => passes(app, r.key), 200)).status).toBe(200);
  });

  it('behind TRUST_PROXY › each forwarded client counts apart; with no proxy trusted, X-Forwarded-For is ignored', async () => {
    const app = await appWith({ RATE_LIMIT_FAILED_AUTH_PER_SECOND: '1', RATE_LIMIT_FAILED_AUTH_BURST: '3', TRUST_PROXY: '1' });
    const r = await createReseller(app);
    const from = (ip: string) => ({ 'X-Forwarded-For': `198.51.100.7, ${ip}` });
    for (let i = 0; i < 10; i++) await passes(app, 'sk_nope', from('203.0.113.1'));
    expect((await passes(app, r.key, from('203.0.113.1'))).status).toBe(429);
    expect((await passes(app, r.key, from('203.0.113.2'))).status).toBe(200);

    const direct = await appWith({ RATE_LIMIT_FAILED_AUTH_PER_SECOND: '1', RATE_LIMIT_FAILED_AUTH_BURST: '3' });
    const d = await createReseller(direct);
    for (let i = 0; i < 10; i++) await passes(direct, 'sk_nope', { 'X-Forwarded-For': `203.0.113.${i}` });
    expect((await passes(direct, d.key, { 'X-Forwarded-For': '203.0.113.99' })).status).toBe(429);
  });
});

describe('redeem attempts per provider key', () => {
  it('past its burst › 429; another provider key is unaffected', async () => {
    const app = await appWith({ RATE_LIMIT_REDEEM_PER_SECOND: '1', RATE_LIMIT_REDEEM_BURST: '3' });
    const w = await createBookingWorld(app);
    const [key, other] = [await providerKey(app, w.gym.id), await providerKey(app, w.gym.id)];
    const tries = [];
    for (let i = 0; i < 10; i++) tries.push(await redeem(app, key, `WXYZWX${2 + (i % 8)}Z`));
    expect(tries[0].status).toBe(404);
    expectLimited(
      tries.find((t) => t.status === 429)!,
      'redeem',
    );
    expect((await redeem(app, other, 'WXYZWXYZ')).status).toBe(404);
  });
});

describe('shared through Redis', () => {
  it('two servers with REDIS_URL › one bucket per key across both', async () => {
    const prefix = `rl-test-${randomBytes(4).toString('hex')}`;
    const shared = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_REDIS_PREFIX: prefix,
      RATE_LIMIT_PER_SECOND: '5',
      RATE_LIMIT_BURST: '10',
    };
    const app = await appWith(shared);
    const other = await serverBeside(app, shared);
    const r = await createReseller(app);
    const both = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${i % 2 ? other : app.baseUrl}/v3/api/business/reseller/passes`, { headers: { Authorization: `Bearer ${r.key}` } }).then(
          (res) => res.status,
        ),
      ),
    );
    const ok = both.filter((s) => s === 200).length;
    // One bucket of 10 (and 5 more should a second begin meanwhile); two apart would pass 20.
    expect(ok, JSON.stringify(both)).toBeGreaterThanOrEqual(10);
    expect(ok, JSON.stringify(both)).toBeLessThanOrEqual(15);
    expect(both.filter((s, i) => s === 429 && i % 2 === 1).length).toBeGreaterThan(0);
    expect(both.filter((s, i) => s === 429 && i % 2 === 0).length).toBeGreaterThan(0);
  });

  it('Redis unreachable › requests are answered (not limited), one log line', async () => {
    const logged = capturingLogger('info');
    const app = await appWith({ RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
    const base = await serverBeside(
      app,
      { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' },
      logged.log,
    );
    const r = await createReseller(app);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${base}/v3/api/business/reseller/passes`, { headers: { Authorization: `Bearer ${r.key}` } }).then((res) => res.status),
      ),
    );
    expect(
      replies.every((s) => s === 200),
      JSON.stringify(replies),
    ).toBe(true);
    expect(logged.lines.filter((l) => l.includes('Redis unreachable'))).toHaveLength(1);
    expect(logged.text()).not.toMatch(/"stack"/);
  });
});
