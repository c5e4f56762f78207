import { createHash } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { call, gql, v3 } from '../support/http.ts';
import { killStartedProcesses, runCli, type CliRun } from './processes.ts';

// The operator CLI as an operator runs it: `node src/main.ts …` child processes on a freshly cloned
// database (DATABASE_URL in the child's env), checked through the rows and through a real server
// (in-process, on the same database) answering the keys the CLI printed.

const T = 60_000;
const app = useApp();
const runs: CliRun[] = [];

afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
});

async function cli(...args: string[]): Promise<CliRun> {
  const run = await runCli(args, { DATABASE_URL: app.databaseUrl });
  runs.push(run);
  return run;
}

/** The one JSON line a successful command prints. */
function printed<T = any>(run: CliRun): T {
  expect(run.code, `${run.args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const count = async (table: string, where = 'true', params: unknown[] = []) =>
  Number((await app.sql<{ n: string }>(`select count(*) as n from ${table} where ${where}`, params))[0].n);

async function resellerRow(id: string) {
  const [row] = await app.sql<{ name: string; currency: string; status: string; balance: string }>(
    'select name, currency, status, balance from reseller join business_account on reseller_id = id where id = ?',
    [id],
  );
  return row && { ...row, balance: Number(row.balance) };
}

/** Everything the CLI could have touched, to prove a failed command wrote nothing. */
async function footprint() {
  const [row] = await app.sql(`select (select count(*) from reseller) as resellers, (select count(*) from api_key) as keys,
      (select count(*) from api_key where revoked_at is not null) as revoked,
      (select count(*) from business_transaction) as ledger, (select count(*) from pass_package) as packages,
      (select coalesce(sum(balance), 0) from business_account) as balances,
      (select count(*) from reseller where status <> 'ACTIVE') as disabled`);
  return row;
}

const passesWith = (key: string) => v3(app, '/passes', { key });

/**
 * The server caches a key's verdict for KEY_CACHE_MS (src/platform/auth.ts) and a command can finish
 * within it: calls until `done` holds, for at most one second (the promise for revoking and disabling),
 * then answers the last reply, so the caller's assertion fails if it never held.
 */
async function withinOneSecond<R>(request: () => Promise<R>, done: (r: R) => boolean): Promise<R> {
  const deadline = performance.now() + 1000;
  for (;;) {
    const reply = await request();
    if (done(reply) || performance.now() >= deadline) return reply;
    await new Promise((r) => setTimeout(r, 50));
  }
}

let demo: { resellers: { id: string; name: string; currency: string; balance: number; api_key: string; passes: { id: string }[] }[] };
let resellerId: string;
let firstKey: { id: string; api_key: string };

describe('seed --demo', () => {
  it(
    '--json prints two resellers with API keys that authenticate against the server',
    async () => {
      const run = await cli('seed', '--demo', '--json');
      demo = printed(run); // stdout is exactly the JSON document
      expect(demo.resellers).toHaveLength(2);
      const keys = demo.resellers.map((r) => r.api_key);
      expect(new Set(keys).size).toBe(2);
      for (const r of demo.resellers) {
        expect(r.id).toMatch(/^res_/);
        expect(r.api_key).toMatch(/^sk_[0-9A-Za-z]{40}$/);
        expect(r.balance).toBeGreaterThan(0);
        expect(await resellerRow(r.id)).toMatchObject({ status: 'ACTIVE', balance: r.balance });
        expect(await count('business_transaction', "reseller_id = ? and type = 'CREDIT'", [r.id])).toBe(1);
        const res = await passesWith(r.api_key);
        expect(res.status).toBe(200);
        // Each key sees its own reseller's packages and nothing else.
        expect(res.body.data.map((p: { id: string }) => p.id).sort()).toEqual(r.passes.map((p) => p.id).sort());
      }
    },
    T,
  );

  it(
    'a second seed on a non-empty database exits 1 and changes nothing',
    async () => {
      const before = await footprint();
      const run = await cli('seed', '--demo');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/already holds resellers/);
      expect(await footprint()).toEqual(before);
    },
    T,
  );
});

describe('resellers', () => {
  it(
    'create prints the new reseller id',
    async () => {
      const before = await count('reseller');
      const out = printed<{ id: string; name: string; currency: string }>(
        await cli('resellers', 'create', '--name', 'Ops Test Reseller', '--currency', 'EUR'),
      );
      expect(out).toEqual({ id: expect.stringMatching(/^res_[0-9A-Z]{26}$/), name: 'Ops Test Reseller', currency: 'EUR' });
      resellerId = out.id;
      expect(await resellerRow(resellerId)).toEqual({ name: 'Ops Test Reseller', currency: 'EUR', status: 'ACTIVE', balance: 0 });
      expect(await count('reseller')).toBe(before + 1);
    },
    T,
  );

  it(
    'create takes the currency in any case; without --currency it is a usage error',
    async () => {
      const out = printed<{ id: string; currency: string }>(
        await cli('resellers', 'create', '--name', 'Lower Case Ltd', '--currency', 'usd'),
      );
      expect(out.currency).toBe('USD');
      expect((await resellerRow(out.id)).currency).toBe('USD');
      const before = await footprint();
      const missing = await cli('resellers', 'create', '--name', 'No Currency Ltd');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^usage: resellers create --name N --currency CUR/);
      expect(await footprint()).toEqual(before);
    },
    T,
  );

  it(
    'list prints every reseller, oldest first, with status and balance',
    async () => {
      const listed = printed<Record<string, unknown>[]>(await cli('resellers', 'list'));
      const rows = await app.sql<{
        id: string;
        name: string;
        currency: string;
        status: string;
        balance: string;
        created_at: string | Date;
      }>(
        'select id, name, currency, status, balance, created_at from reseller join business_account on reseller_id = id order by created_at, id',
      );
      expect(listed).toEqual(
        rows.map((r) => ({
          id: r.id,
          name: r.name,
          currency: r.currency,
          status: r.status,
          balance: Number(r.balance),
          created_at: new Date(r.created_at).toISOString(),
        })),
      );
      expect(listed.map((r) => r.id)).toEqual(expect.arrayContaining([resellerId, ...demo.resellers.map((r) => r.id)]));
    },
    T,
  );

  it(
    'fund raises the balance and writes one CREDIT business_transaction row',
    async () => {
      const out = printed<{ id: string; balance: number }>(await cli('resellers', 'fund', resellerId, '500'));
      expect(out).toEqual({ id: resellerId, balance: 500 });
      expect((await resellerRow(resellerId)).balance).toBe(500);
      const ledger = await app.sql<{ type: string; amount: string; balance_after: string }>(
        'select type, amount, balance_after from business_transaction where reseller_id = ?',
        [resellerId],
      );
      expect(ledger.map((r) => ({ type: r.type, amount: Number(r.amount), after: Number(r.balance_after) }))).toEqual([
        { type: 'CREDIT', amount: 500, after: 500 },
      ]);
    },
    T,
  );

  it(
    'fund with an invalid amount or an unknown reseller exits non-zero and writes nothing',
    async () => {
      const before = await footprint();
      const bad = await Promise.all(
        ['0', '-5', 'abc', '99999999999999999999'].map((amount) => cli('resellers', 'fund', resellerId, amount)),
      );
      for (const run of bad) {
        expect(run.code, run.args.join(' ')).not.toBe(0);
        expect(run.stdout).toBe('');
        expect(run.stderr, run.args.join(' ')).toMatch(/^usage: resellers fund/);
      }
      const unknown = await cli('resellers', 'fund', 'res_01AAAAAAAAAAAAAAAAAAAAAAAA', '100');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^resource_not_found/);
      expect(await footprint()).toEqual(before);
      expect((await resellerRow(resellerId)).balance).toBe(500);
    },
    T,
  );
});

describe('keys and account status', () => {
  it(
    'keys create prints an sk_ key that authenticates; only its SHA-256 is stored',
    async () => {
      firstKey = printed(await cli('keys', 'create', resellerId, '--label', 'ops'));
      expect(firstKey.id).toMatch(/^key_/);
      expect(firstKey.api_key).toMatch(/^sk_[0-9A-Za-z]{40}$/);
      const res = await passesWith(firstKey.api_key);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);

      const [row] = await app.sql<Record<string, unknown>>('select * from api_key where id = ?', [firstKey.id]);
      expect(row).toMatchObject({
        reseller_id: resellerId,
        secret_hash: sha256(firstKey.api_key),
        last4: firstKey.api_key.slice(-4),
        label: 'ops',
        revoked_at: null,
      });
      // The secret (even without its prefix) is in no column of any table.
      const body = firstKey.api_key.slice(3);
      const tables = await app.sql<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
      );
      expect(tables.length).toBeGreaterThan(3);
      for (const { table_name } of tables) {
        expect(await count(`"${table_name}" t`, 'strpos(t::text, ?) > 0', [body]), table_name).toBe(0);
      }
    },
    T,
  );

  it(
    'resellers disable makes its key answer 403 account_disabled; enable restores 200',
    async () => {
      expect(printed(await cli('resellers', 'disable', resellerId))).toEqual({ id: resellerId, status: 'DISABLED' });
      const rest = await withinOneSecond(
        () => passesWith(firstKey.api_key),
        (r) => r.status === 403,
      );
      expect(rest.status).toBe(403);
      expect(rest.body.error).toMatchObject({ code: 'account_disabled', type: 'permission_error' });
      const graphql = await gql(app, firstKey.api_key, '{ passes(first: 1) { edges { cursor } } }');
      expect(graphql.status).toBe(403);
      expect(graphql.body.errors?.[0]?.extensions?.code).toBe('account_disabled');
      // Another reseller is unaffected.
      expect((await passesWith(demo.resellers[0].api_key)).status).toBe(200);

      expect(printed(await cli('resellers', 'enable', resellerId))).toEqual({ id: resellerId, status: 'ACTIVE' });
      expect(
        (
          await withinOneSecond(
            () => passesWith(firstKey.api_key),
            (r) => r.status === 200,
          )
        ).status,
      ).toBe(200);
      expect((await gql(app, firstKey.api_key, '{ passes(first: 1) { edges { cursor } } }')).status).toBe(200);
    },
    T,
  );

  it(
    "keys revoke makes that key 401 while the reseller's other keys keep working",
    async () => {
      const second = printed<{ id: string; api_key: string }>(await cli('keys', 'create', resellerId));
      expect(printed(await cli('keys', 'revoke', firstKey.id))).toEqual({ id: firstKey.id, revoked: true });
      const revoked = await withinOneSecond(
        () => passesWith(firstKey.api_key),
        (r) => r.status === 401,
      );
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('invalid_api_key');
      expect((await passesWith(second.api_key)).status).toBe(200);
      expect(await count('api_key', 'id = ? and revoked_at is not null', [firstKey.id])).toBe(1);
      expect(await count('api_key', 'id = ? and revoked_at is null', [second.id])).toBe(1);

      // keys list: ids, labels, last 4 characters, created and revoked times; never a secret or its hash.
      const run = await cli('keys', 'list', resellerId);
      const listed = printed<Record<string, unknown>[]>(run);
      expect(listed).toEqual([
        {
          id: firstKey.id,
          label: 'ops',
          last4: firstKey.api_key.slice(-4),
          created_at: expect.any(String),
          revoked_at: expect.any(String),
        },
        { id: second.id, label: null, last4: second.api_key.slice(-4), created_at: expect.any(String), revoked_at: null },
      ]);
      const [hash] = await app.sql<{ secret_hash: string }>('select secret_hash from api_key where id = ?', [second.id]);
      for (const secret of [firstKey.api_key, second.api_key]) expect(run.stdout).not.toContain(secret.slice(3, -4));
      expect(run.stdout).not.toContain(hash.secret_hash);
      const unknown = await cli('keys', 'list', 'res_01AAAAAAAAAAAAAAAAAAAAAAAA');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^resource_not_found/);
    },
    T,
  );
});

describe('providers keys', () => {
  let providerId: string;
  let providerKey: { id: string; provider_id: string; api_key: string };
  const providerBookings = (key: string) => call(app, '/v3/api/provider/bookings', { key });

  it(
    'create prints a pk_ key once that works on the provider API only; only its SHA-256 is stored',
    async () => {
      [{ id: providerId }] = await app.sql<{ id: string }>('select id from provider order by id limit 1');
      providerKey = printed(await cli('providers', 'keys', 'create', providerId, '--label', 'front desk'));
      expect(providerKey).toEqual({
        id: expect.stringMatching(/^pkey_[0-9A-Z]{26}$/),
        provider_id: providerId,
        api_key: expect.stringMatching(/^pk_[0-9A-Za-z]{40}$/),
        note: 'shown once; store it now',
      });
      const res = await providerBookings(providerKey.api_key);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', url: '/v3/api/provider/bookings' });
      expect(res.body.data.filter((b: { provider_id: string }) => b.provider_id !== providerId)).toEqual([]);
      // A provider key is not a reseller key (docs/errors.md "API keys").
      expect((await passesWith(providerKey.api_key)).body.error).toMatchObject({ code: 'permission_denied' });

      const [row] = await app.sql<Record<string, unknown>>('select * from provider_api_key where id = ?', [providerKey.id]);
      expect(row).toMatchObject({
        provider_id: providerId,
        secret_hash: sha256(providerKey.api_key),
        last4: providerKey.api_key.slice(-4),
        label: 'front desk',
        revoked_at: null,
      });
      const tables = await app.sql<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
      );
      for (const { table_name } of tables) {
        expect(await count(`"${table_name}" t`, 'strpos(t::text, ?) > 0', [providerKey.api_key.slice(3)]), table_name).toBe(0);
      }
    },
    T,
  );

  it(
    'list shows the keys without their secrets; revoke makes the key 401; an unknown provider or key exits 1',
    async () => {
      expect(printed(await cli('providers', 'keys', 'revoke', providerKey.id))).toEqual({ id: providerKey.id, revoked: true });
      const revoked = await withinOneSecond(
        () => providerBookings(providerKey.api_key),
        (r) => r.status === 401,
      );
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('invalid_api_key');
      const run = await cli('providers', 'keys', 'list', providerId);
      expect(printed(run)).toEqual([
        {
          id: providerKey.id,
          label: 'front desk',
          last4: providerKey.api_key.slice(-4),
          created_at: expect.any(String),
          revoked_at: expect.any(String),
        },
      ]);
      expect(run.stdout).not.toContain(providerKey.api_key.slice(3, -4));
      expect(run.stdout).not.toContain(sha256(providerKey.api_key));

      const before = await count('provider_api_key');
      for (const args of [
        ['create', 'prov_01AAAAAAAAAAAAAAAAAAAAAAAA'],
        ['list', 'prov_01AAAAAAAAAAAAAAAAAAAAAAAA'],
        ['revoke', 'pkey_01AAAAAAAAAAAAAAAAAAAAAAAA'],
      ]) {
        const unknown = await cli('providers', 'keys', ...args);
        expect(unknown.code, args.join(' ')).toBe(1);
        expect(unknown.stdout).toBe('');
        expect(unknown.stderr).toMatch(/^resource_not_found/);
      }
      expect(await count('provider_api_key')).toBe(before);
    },
    T,
  );

  it(
    'a malformed command line exits 2 with its usage line, before anything starts',
    async () => {
      for (const [args, line] of [
        [['providers'], /^usage: providers keys list\|create\|revoke/],
        [['providers', 'keys', 'create'], /^usage: providers keys create PROVIDER_ID \[--label L\]/],
        [['providers', 'keys', 'create', providerId, '--lable', 'typo'], /^usage: providers keys create/],
        [['providers', 'keys', 'revoke'], /^usage: providers keys revoke KEY_ID/],
      ] as const) {
        const run = await cli(...args);
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toMatch(line);
      }
    },
    T,
  );
});

describe('usage and secrets', () => {
  it(
    'an unknown command exits 2 and prints the usage on stderr',
    async () => {
      const run = await cli('frobnicate');
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^usage: reseller-gateway <command>/);
      expect(run.stderr).toMatch(/resellers fund RESELLER_ID AMOUNT/);
    },
    T,
  );

  it(
    'an API key appears only in the one output that reveals it, never in log lines',
    async () => {
      const keys = new Set<string>();
      for (const run of runs) for (const k of `${run.stdout}\n${run.stderr}`.match(/sk_[0-9A-Za-z]{40}/g) ?? []) keys.add(k);
      expect(keys.size).toBe(4); // two demo keys and two `keys create`
      for (const key of keys) {
        const revealing = runs.filter((r) => r.stdout.includes(key) || r.stderr.includes(key));
        expect(
          revealing.map((r) => r.args[0]),
          key,
        ).toHaveLength(1);
        expect(revealing[0].stderr).not.toContain(key);
        expect(revealing[0].stdout.split(key)).toHaveLength(2);
      }
      for (const run of runs) expect(run.stderr, run.args.join(' ')).not.toMatch(/sk_/);
    },
    T,
  );

  it(
    'a provider key appears only in the one output that reveals it',
    async () => {
      const revealing = runs.filter((r) => /pk_[0-9A-Za-z]{40}/.test(`${r.stdout}\n${r.stderr}`));
      expect(revealing.map((r) => r.args.slice(0, 3).join(' '))).toEqual(['providers keys create']);
      for (const run of runs) expect(run.stderr, run.args.join(' ')).not.toMatch(/pk_[0-9A-Za-z]{40}/);
    },
    T,
  );
});
