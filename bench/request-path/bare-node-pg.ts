// Baseline (c): GET /passes written by hand on node:http and `pg`: the one statement our list
// runs (src/modules/passes/passes.service.ts listPassesWithProviderCounts), the same V3 list
// envelope, JSON.stringify. The API
// key is checked against the one key it was started with (what an in-process key cache does on a
// hit), so no auth SELECT: the floor our handler is compared with.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { exitWithParent } from './processes.ts';
import { coveredProviderCountsSql } from '../../src/modules/passes/provider-counts.ts';

exitWithParent();
const resellerId = process.env.BENCH_RESELLER_ID!;
const keyHash = process.env.BENCH_KEY_SHA256!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

// The same single statement our list runs (page + provider counts); the coverage SQL is imported,
// not copied, so the baseline cannot drift from what it is compared with. Named, so it is prepared
// once per connection, as ours is (src/db/engine/prepared-read.ts).
const PAGE = `with page as (
       select id, name, description, price, currency, duration, payment_model, categories, created_at
         from pass_package where reseller_id = $1 order by id desc limit $2
     ), coverage as (${coveredProviderCountsSql('page')})
     select page.*, coalesce(coverage.providers, 0) as provider_count
       from page left join coverage on coverage.pass_id = page.id
      order by page.id desc`;

interface PassRow {
  id: string;
  name: string;
  description: string;
  price: string;
  currency: string;
  duration: string;
  payment_model: string;
  categories: { type: string; tiers: string[]; visits_allowed: number | null; credit_allocated: number }[];
  created_at: Date;
  provider_count: string;
}

async function listPasses(limit: number) {
  const { rows } = await pool.query<PassRow>({ name: 'passes_page', text: PAGE, values: [resellerId, limit + 1] });
  const page = rows.slice(0, limit);
  return {
    object: 'list',
    data: page.map((p) => ({
      object: 'pass',
      id: p.id,
      name: p.name,
      description: p.description,
      price: Number(p.price),
      currency: p.currency.trim(),
      duration: p.duration,
      payment_model: p.payment_model,
      categories: p.categories.map((c) => ({
        type: c.type,
        tiers: [...c.tiers],
        visits_allowed: c.visits_allowed,
        credit_allocated: c.credit_allocated,
      })),
      provider_count: Number(p.provider_count),
      created: Math.floor(p.created_at.getTime() / 1000),
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

http
  .createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/passes') return send(res, 404, { error: 'not found' });
    const secret = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!secret || createHash('sha256').update(secret).digest('hex') !== keyHash) return send(res, 401, { error: 'invalid_api_key' });
    const limit = Number(url.searchParams.get('limit') ?? 10);
    listPasses(limit).then(
      (body) => send(res, 200, body),
      (err: Error) => send(res, 500, { error: err.message }),
    );
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
