// PostGraphile 5 (amber preset, grafserv on node:http) answering the frontend "my bookings" shape
// (bench/README.md "Frontend query") over the same database as our server: only the tables that
// shape reads are exposed (client, booking, provider, issued_pass, pass_package), read-only, with
// the relations PostGraphile derives from their foreign keys (bookingsByClientId,
// providerByProviderId, issuedPassesByClientId, passPackageByPassId). Every request first looks
// up its API key, the SHA-256 SELECT our src/platform/auth.ts runs, on the same pool, in grafast's
// context callback; an unknown key is refused before the query runs.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { jsonPgSmartTags } from 'postgraphile/utils';
import { exitWithParent } from '../request-path/processes.ts';

exitWithParent();
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

/** The tables the query reads; every other one gets the behaviour "nothing". */
const exposed = ['client', 'booking', 'provider', 'issued_pass', 'pass_package'];
const { rows: tables } = await pool.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'public'`);
const onlyTheShape = jsonPgSmartTags({
  version: 1,
  config: {
    class: Object.fromEntries(
      tables.map((t) => [t.name, { tags: { behavior: exposed.includes(t.name) ? ['-insert', '-update', '-delete'] : ['-*'] } }]),
    ),
  },
});

async function resellerOfKey(authorization: string | undefined): Promise<string> {
  const secret = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!secret) throw new Error('invalid_api_key');
  const {
    rows: [row],
  } = await pool.query<{ reseller_id: string; status: string }>(
    `select k.id as key_id, r.id as reseller_id, r.status, r.currency
       from api_key k join reseller r on r.id = k.reseller_id
      where k.secret_hash = $1 and k.revoked_at is null`,
    [createHash('sha256').update(secret).digest('hex')],
  );
  if (!row || row.status !== 'ACTIVE') throw new Error('invalid_api_key');
  return row.reseller_id;
}

declare global {
  namespace Grafast {
    interface Context {
      benchResellerId?: string;
    }
  }
}

const preset: GraphileConfig.Preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [onlyTheShape],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
  grafast: {
    explain: false,
    async context(requestContext) {
      return { benchResellerId: await resellerOfKey(requestContext.node?.req.headers.authorization) };
    },
  },
};

const pgl = postgraphile(preset);
await pgl.getSchema(); // introspect and build before listening: "accepts connections" means ready
const server = http.createServer();
const serv = pgl.createServ(grafserv);
serv.addTo(server);
server.listen(Number(process.env.PORT), '127.0.0.1');
