import { afterAll, describe, expect, it } from 'vitest';
import { startApp, UNLIMITED, type TestApp } from '../support/app.ts';
import { createBookingWorld } from '../support/bookings.ts';
import { gql, v3, type Reply } from '../support/http.ts';
import { killStartedProcesses, runCli, Service } from '../ops/processes.ts';
import { asClient, clientSession } from '../support/client-sessions.ts';

// docs/partner-guide.md "Client sessions" and docs/operator-guide.md "Rate limits": each token has a
// bucket of its own; a failed token counts against the client's address; a revoke reaches every process.

const T = 120_000;
const opened: TestApp[] = [];
afterAll(async () => {
  await killStartedProcesses();
  for (const app of opened.reverse()) await app.close();
});

async function appWith(overrides: Record<string, string>): Promise<TestApp> {
  const app = await startApp({ ...UNLIMITED, ...overrides });
  opened.push(app);
  return app;
}

const READ = 'query($id: ID!) { client(id: $id) { id } }';

describe('rate limits', () => {
  it('a token past its burst › 429 rate_limited; another token of the same client and the reseller key are unaffected', async () => {
    const app = await appWith({});
    const w = await createBookingWorld(app);
    const a = await clientSession(app, w.reseller.key, w.client.id);
    const b = await clientSession(app, w.reseller.key, w.client.id);
    // The reseller's own limit, set after the setup's requests: every bucket under it (the key's, each token's) starts full.
    const set = await runCli(['resellers', 'limits', w.reseller.id, '--per-second', '1', '--burst', '3'], {
      DATABASE_URL: app.databaseUrl,
    });
    expect(set.code, set.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 600)); // the verdict caches' 500 ms
    const replies: Reply[] = [];
    for (let i = 0; i < 6; i++) replies.push(await asClient(app, a.token, READ, { id: w.client.id }));
    const limited = replies.find((r) => r.status === 429);
    expect(limited, JSON.stringify(replies.map((r) => r.status))).toBeDefined();
    expect(limited!.body.errors[0].extensions).toMatchObject({ code: 'rate_limited' });
    expect(limited!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const other = await asClient(app, b.token, READ, { id: w.client.id });
    expect(other.status, other.text).toBe(200);
    expect(other.body.data.client.id).toBe(w.client.id);
    expect((await v3(app, '/passes', { key: w.reseller.key })).status).toBe(200);
  });

  it('unknown client-session tokens count against the address › 429 even for a valid key', async () => {
    const app = await appWith({ RATE_LIMIT_FAILED_AUTH_PER_SECOND: '1', RATE_LIMIT_FAILED_AUTH_BURST: '3' });
    const w = await createBookingWorld(app);
    const guesses: Reply[] = [];
    for (let i = 0; i < 6; i++) guesses.push(await gql(app, `cs_${String(i).repeat(40)}`, READ, { id: w.client.id }));
    expect(guesses[0].status).toBe(401);
    expect(guesses[0].body.errors[0].extensions.code).toBe('invalid_client_session');
    expect(
      guesses.some((g) => g.status === 429),
      JSON.stringify(guesses.map((g) => g.status)),
    ).toBe(true);
    expect((await v3(app, '/passes', { key: w.reseller.key })).status).toBe(429);
  });
});

describe('revocation on another server process', () => {
  it(
    'a session revoked through one process › refused by a second `serve` process within 1 s',
    async () => {
      const app = await appWith({});
      const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0' });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      const base = service.logLines().find((l) => l.msg === 'listening')!.url as string;
      const w = await createBookingWorld(app);
      const session = await clientSession(app, w.reseller.key, w.client.id);
      const readThere = () =>
        fetch(`${base}/graphql`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${session.token}`,
            'Content-Type': 'application/json',
            Accept: 'application/graphql-response+json',
          },
          body: JSON.stringify({ query: READ, variables: { id: w.client.id } }),
        });
      // The second process has the token's verdict cached.
      const before = await readThere();
      expect(before.status, await before.text()).toBe(200);
      const revoked = await v3(app, `/client_sessions/${session.id}`, { key: w.reseller.key, method: 'DELETE' });
      expect(revoked.status, revoked.text).toBe(200);
      await new Promise((r) => setTimeout(r, 1000));
      const after = await readThere();
      const body = (await after.json()) as { errors: { extensions: { code: string } }[] };
      expect(after.status).toBe(401);
      expect(body.errors[0].extensions.code).toBe('invalid_client_session');
      expect((await asClient(app, session.token, READ, { id: w.client.id })).status).toBe(401);
    },
    T,
  );
});
