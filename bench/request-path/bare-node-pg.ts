// Baseline (c): GET /passes written by hand on node:http and `pg`: the two statements our list
// runs (the keyset page of src/modules/passes/passes.service.ts listPasses and the provider count
// of src/modules/providers/pass-coverage.ts), the same V3 list envelope, JSON.stringify. The API
// key is checked against the one key it was started with (what an in-process key cache does on a
// hit), so no auth SELECT: the floor our handler is compared with.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { exitWithParent } from './processes.ts';

exitWithParent();
const resellerId = process.env.BENCH_RESELLER_ID!;
const keyHash = process.env.BENCH_KEY_SHA256!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const PAGE = `select p0.* from pass_package as p0 where p0.reseller_id = $1 order by p0.id desc limit $2`;
const PROVIDER_COUNT = `with pairs as (
       select distinct pp.id as pass_id, c->>'type' as category, upper(t) as tier
         from pass_package pp
         cross join lateral jsonb_array_elements(pp.categories) c
         cross join lateral jsonb_array_elements_text(c->'tiers') t
        where pp.id = any($1)
     ), counts as (
       select p.category, p.tier, count(*) as n
         from provider p
        where (p.category, p.tier) in (select category, tier from pairs)
        group by p.category, p.tier
     )
     select pairs.pass_id, sum(counts.n) as providers
       from pairs
       join counts using (category, tier)
      group by pairs.pass_id`;

interface PassRow {
  id: string; name: string; description: string; price: string; currency: string; duration: string;
  payment_model: string; categories: { type: string; tiers: string[]; visits_allowed: number | null; credit_allocated: number }[]; created_at: Date;
}

async function listPasses(limit: number) {
  const { rows } = await pool.query<PassRow>(PAGE, [resellerId, limit + 1]);
  const page = rows.slice(0, limit);
  const counts = await pool.query<{ pass_id: string; providers: string }>(PROVIDER_COUNT, [page.map((r) => r.id)]);
  const providers = new Map(counts.rows.map((r) => [r.pass_id, Number(r.providers)]));
  return {
    object: 'list',
    data: page.map((p) => ({
      object: 'pass', id: p.id, name: p.name, description: p.description, price: Number(p.price), currency: p.currency.trim(),
      duration: p.duration, payment_model: p.payment_model,
      categories: p.categories.map((c) => ({ type: c.type, tiers: [...c.tiers], visits_allowed: c.visits_allowed, credit_allocated: c.credit_allocated })),
      provider_count: providers.get(p.id) ?? 0, created: Math.floor(p.created_at.getTime() / 1000),
    })),
    has_more: rows.length > limit,
    url: '/v3/api/business/reseller/passes',
    message: 'Passes retrieved successfully',
  };
}

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};

http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' || url.pathname !== '/passes') return send(res, 404, { error: 'not found' });
  const secret = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!secret || createHash('sha256').update(secret).digest('hex') !== keyHash) return send(res, 401, { error: 'invalid_api_key' });
  const limit = Number(url.searchParams.get('limit') ?? 10);
  listPasses(limit).then((body) => send(res, 200, body), (err: Error) => send(res, 500, { error: err.message }));
}).listen(Number(process.env.PORT), '127.0.0.1');
