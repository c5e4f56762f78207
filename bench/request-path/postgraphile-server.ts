// PostGraphile 5 (amber preset, grafserv on node:http) as the benches run it, in a process of its
// own started by processes.ts: `behaviourOf` gives a table's smart-tag behaviour (undefined: the
// preset's default), and with `withKeyLookup` every request first looks up its API
// key, the SHA-256 SELECT our src/platform/auth.ts runs, on the same pool, in grafast's context
// callback; an unknown key is refused before the query runs.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { jsonPgSmartTags } from 'postgraphile/utils';
import { exitWithParent } from './processes.ts';

declare global {
  namespace Grafast {
    interface Context {
      benchResellerId?: string;
    }
  }
}

export async function servePostGraphile(options: {
  behaviourOf: (table: string) => string[] | undefined;
  withKeyLookup: boolean;
}): Promise<void> {
  exitWithParent();
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const { rows: tables } = await pool.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'public'`);
  const exposure = jsonPgSmartTags({
    version: 1,
    config: {
      class: Object.fromEntries(
        tables.flatMap((t) => {
          const behavior = options.behaviourOf(t.name);
          return behavior ? [[t.name, { tags: { behavior } }]] : [];
        }),
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

  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    plugins: [exposure],
    pgServices: [makePgService({ pool, schemas: ['public'] })],
    grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
    grafast: {
      explain: false,
      ...(options.withKeyLookup
        ? {
            async context(requestContext) {
              return { benchResellerId: await resellerOfKey(requestContext.node?.req.headers.authorization) };
            },
          }
        : {}),
    },
  };

  const pgl = postgraphile(preset);
  await pgl.getSchema(); // introspect and build before listening: "accepts connections" means ready
  const server = http.createServer();
  pgl.createServ(grafserv).addTo(server);
  server.listen(Number(process.env.PORT), '127.0.0.1');
}
