// The command line, parsed and checked in full before anything starts: a usage error is reported
// at once, never after a database has been started.

export const USAGE = `usage: reseller-gateway <command>

  serve [--workers N] [--no-migrate]   start the HTTP server; migrates first, under a lock other instances wait for;
                                       on the embedded database (no DATABASE_URL) outside production, seeds demo data
                                       when it is empty; --workers N: N HTTP processes sharing the port (node:cluster);
                                       --no-migrate (or MIGRATE_ON_START=false): migrations are a release step, and a
                                       schema with pending migrations is refused
  worker                               outbox delivery and the sweeps (idempotency records, booking sessions), without HTTP
                                       (for OUTBOX_IN_PROCESS=false deployments)
  sessions expire                      mark booking sessions past their 24 hours EXPIRED now (the sweep
                                       serve and worker run every SESSION_SWEEP_MS); prints how many
  access-codes expire                  mark access codes past their day (and their sessions past 24 hours) EXPIRED now,
                                       giving the codes' visits back (the sweep serve and worker run every
                                       SESSION_SWEEP_MS); prints how many
  migrate                              apply pending migrations (the release step); prints
                                       {"applied": [names…], "up_to_date": true}
  seed --demo [--json]                 create demo resellers, keys, passes and a catalogue (3 cities) on an empty database
                                       (the only way to demo data on DATABASE_URL)
  resellers list                       every reseller: id, name, currency, status, balance, created
  resellers create --name N --currency CUR
                                       CUR is required: an ISO 4217 code in any case (eur = EUR)
  resellers disable|enable RESELLER_ID
  resellers fund RESELLER_ID AMOUNT    credit the business account (minor units)
  resellers limits RESELLER_ID --per-second N --burst M | --default
                                       the reseller's own rate limit per API key (docs/operator-guide.md "Rate limits")
  resellers origins RESELLER_ID [--add ORIGIN,…] [--remove ORIGIN,…]
                                       prints (after the change) the origins whose pages may call /graphql with the
                                       reseller's client-session tokens (docs/operator-guide.md "CORS allow-lists")
  keys list RESELLER_ID                a reseller's API keys: id, label, last 4 characters, created, revoked (never the secret)
  keys create RESELLER_ID [--label L]  prints the new key once
  keys revoke KEY_ID
  providers keys list PROVIDER_ID      a provider's API keys (the provider API): id, label, last 4 characters, created, revoked
  providers keys create PROVIDER_ID [--label L]
                                       prints the new provider key (pk_…) once
  providers keys revoke KEY_ID
  documents register RESELLER_ID FILE  register the GraphQL documents of a manifest, {"<sha256>": "<document>"} as GraphQL
                                       Code Generator's client preset writes it (persisted-documents.json), all or none;
                                       each hash must be its document's, each document valid for the schema
  documents list RESELLER_ID           a reseller's trusted documents: id, sha256, operation names, created
  documents delete RESELLER_ID SHA256  stop trusting a document (every server within 1 s)
  documents only RESELLER_ID on|off    on: the reseller's client-session tokens run only its trusted documents
  catalog import FILE                  load providers, services, classes, instances, co-pay options and
                                       pass packages from a JSON file (docs/catalog-format.md); all or nothing
  print-schema                         write schema.graphql and docs/openapi.json from the code

DATABASE_URL must name a database that exists (it is never created). Without DATABASE_URL an
embedded PostgreSQL runs with its data under DATA_DIR (default .data); while \`serve\` runs there,
the other commands use its database.`;

export type Command =
  | { name: 'help'; exitCode: 0 | 2 }
  | { name: 'serve'; workers: number; migrate: boolean }
  | { name: 'worker' }
  | { name: 'migrate' }
  | { name: 'sessions expire' }
  | { name: 'access-codes expire' }
  | { name: 'seed'; json: boolean }
  | { name: 'resellers list' }
  | { name: 'resellers create'; resellerName: string; currency: string }
  | { name: 'resellers status'; resellerId: string; status: 'ACTIVE' | 'DISABLED' }
  | { name: 'resellers fund'; resellerId: string; amount: number }
  | { name: 'resellers limits'; resellerId: string; limit: { perSecond: number; burst: number } | null }
  | { name: 'resellers origins'; resellerId: string; add: string[]; remove: string[] }
  | { name: 'keys list'; resellerId: string }
  | { name: 'keys create'; resellerId: string; label?: string }
  | { name: 'keys revoke'; keyId: string }
  | { name: 'providers keys list'; providerId: string }
  | { name: 'providers keys create'; providerId: string; label?: string }
  | { name: 'providers keys revoke'; keyId: string }
  | { name: 'catalog import'; file: string }
  | { name: 'documents register'; resellerId: string; file: string }
  | { name: 'documents list'; resellerId: string }
  | { name: 'documents delete'; resellerId: string; sha256: string }
  | { name: 'documents only'; resellerId: string; only: boolean }
  | { name: 'print-schema' };

/** Exit code 2, with the usage line for the command. */
export class UsageError extends Error {}

/** A failure the operator can act on, reported as its message alone (exit 1). */
export class ReportedError extends Error {}
const usage = (m: string) => new UsageError(`usage: ${m}`);

export function parseCommand(argv: string[]): Command {
  const [command, ...rest] = argv;
  if (!command) return { name: 'help', exitCode: 2 };
  if (command === 'help' || command === '--help' || command === '-h') return { name: 'help', exitCode: 0 };
  switch (command) {
    case 'serve': {
      const { flags } = parseArgs(rest, { '--workers': true, '--no-migrate': false }, 0, 'serve [--workers N] [--no-migrate]');
      const workers = flags['--workers'] ?? '1';
      if (!/^\d+$/.test(workers) || Number(workers) < 1 || Number(workers) > 256)
        throw usage('serve [--workers N] [--no-migrate] (N from 1 to 256)');
      return { name: 'serve', workers: Number(workers), migrate: flags['--no-migrate'] === undefined };
    }
    case 'worker':
      parseArgs(rest, {}, 0, 'worker');
      return { name: 'worker' };
    case 'migrate':
      parseArgs(rest, {}, 0, 'migrate');
      return { name: 'migrate' };
    case 'sessions': {
      if (rest[0] !== 'expire') throw usage('sessions expire');
      parseArgs(rest.slice(1), {}, 0, 'sessions expire');
      return { name: 'sessions expire' };
    }
    case 'access-codes': {
      if (rest[0] !== 'expire') throw usage('access-codes expire');
      parseArgs(rest.slice(1), {}, 0, 'access-codes expire');
      return { name: 'access-codes expire' };
    }
    case 'print-schema':
      parseArgs(rest, {}, 0, 'print-schema');
      return { name: 'print-schema' };
    case 'seed': {
      const { flags } = parseArgs(rest, { '--demo': false, '--json': false }, 0, 'seed --demo [--json]');
      if (flags['--demo'] === undefined) throw usage('seed --demo [--json]');
      return { name: 'seed', json: flags['--json'] !== undefined };
    }
    case 'resellers':
      return parseResellers(rest);
    case 'keys':
      return parseKeys(rest);
    case 'providers':
      return parseProviders(rest);
    case 'documents':
      return parseDocuments(rest);
    case 'catalog': {
      const [action, ...args] = rest;
      if (action !== 'import') throw usage('catalog import FILE');
      const { positional } = parseArgs(args, {}, 1, 'catalog import FILE');
      return { name: 'catalog import', file: positional[0] };
    }
    default:
      throw new UsageError(USAGE);
  }
}

function parseResellers([action, ...args]: string[]): Command {
  switch (action) {
    case 'list':
      parseArgs(args, {}, 0, 'resellers list');
      return { name: 'resellers list' };
    case 'create': {
      const line = 'resellers create --name N --currency CUR (an ISO 4217 code such as EUR)';
      const { flags } = parseArgs(args, { '--name': true, '--currency': true }, 0, line);
      const name = flags['--name']?.trim();
      const currency = flags['--currency']?.trim().toUpperCase();
      if (!name || !currency || !/^[A-Z]{3}$/.test(currency)) throw usage(line);
      return { name: 'resellers create', resellerName: name, currency };
    }
    case 'disable':
    case 'enable': {
      const { positional } = parseArgs(args, {}, 1, `resellers ${action} RESELLER_ID`);
      return { name: 'resellers status', resellerId: positional[0], status: action === 'disable' ? 'DISABLED' : 'ACTIVE' };
    }
    case 'fund': {
      const line = 'resellers fund RESELLER_ID AMOUNT (a positive integer of minor units)';
      const {
        positional: [resellerId, amount],
      } = parseArgs(args, {}, 2, line);
      if (!/^\d+$/.test(amount) || Number(amount) <= 0 || !Number.isSafeInteger(Number(amount))) throw usage(line);
      return { name: 'resellers fund', resellerId, amount: Number(amount) };
    }
    case 'limits': {
      const line = 'resellers limits RESELLER_ID --per-second N --burst M (positive integers, M ≥ N) | --default';
      const {
        positional: [resellerId],
        flags,
      } = parseArgs(args, { '--per-second': true, '--burst': true, '--default': false }, 1, line);
      if (flags['--default'] !== undefined) {
        if (flags['--per-second'] !== undefined || flags['--burst'] !== undefined) throw usage(line);
        return { name: 'resellers limits', resellerId, limit: null };
      }
      const [perSecond, burst] = [flags['--per-second'], flags['--burst']].map((v) =>
        v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : 0,
      );
      if (perSecond <= 0 || burst < perSecond) throw usage(line);
      return { name: 'resellers limits', resellerId, limit: { perSecond, burst } };
    }
    case 'origins': {
      const line = 'resellers origins RESELLER_ID [--add ORIGIN,…] [--remove ORIGIN,…]';
      const {
        positional: [resellerId],
        flags,
      } = parseArgs(args, { '--add': true, '--remove': true }, 1, line);
      const list = (value: string | undefined) => (value ?? '').split(',').filter((o) => o !== '');
      return { name: 'resellers origins', resellerId, add: list(flags['--add']), remove: list(flags['--remove']) };
    }
    default:
      throw usage('resellers list|create|disable|enable|fund|limits|origins');
  }
}

function parseKeys([action, ...args]: string[]): Command {
  switch (action) {
    case 'list':
      return { name: 'keys list', resellerId: parseArgs(args, {}, 1, 'keys list RESELLER_ID').positional[0] };
    case 'create': {
      const { positional, flags } = parseArgs(args, { '--label': true }, 1, 'keys create RESELLER_ID [--label L]');
      return { name: 'keys create', resellerId: positional[0], label: flags['--label'] };
    }
    case 'revoke':
      return { name: 'keys revoke', keyId: parseArgs(args, {}, 1, 'keys revoke KEY_ID').positional[0] };
    default:
      throw usage('keys list|create|revoke');
  }
}

function parseDocuments([action, ...args]: string[]): Command {
  switch (action) {
    case 'register': {
      const { positional } = parseArgs(args, {}, 2, 'documents register RESELLER_ID FILE');
      return { name: 'documents register', resellerId: positional[0], file: positional[1] };
    }
    case 'list':
      return { name: 'documents list', resellerId: parseArgs(args, {}, 1, 'documents list RESELLER_ID').positional[0] };
    case 'delete': {
      const { positional } = parseArgs(args, {}, 2, 'documents delete RESELLER_ID SHA256');
      return { name: 'documents delete', resellerId: positional[0], sha256: positional[1] };
    }
    case 'only': {
      const line = 'documents only RESELLER_ID on|off';
      const { positional } = parseArgs(args, {}, 2, line);
      if (positional[1] !== 'on' && positional[1] !== 'off') throw usage(line);
      return { name: 'documents only', resellerId: positional[0], only: positional[1] === 'on' };
    }
    default:
      throw usage('documents register|list|delete|only');
  }
}

function parseProviders([what, action, ...args]: string[]): Command {
  if (what !== 'keys') throw usage('providers keys list|create|revoke');
  switch (action) {
    case 'list':
      return { name: 'providers keys list', providerId: parseArgs(args, {}, 1, 'providers keys list PROVIDER_ID').positional[0] };
    case 'create': {
      const { positional, flags } = parseArgs(args, { '--label': true }, 1, 'providers keys create PROVIDER_ID [--label L]');
      return { name: 'providers keys create', providerId: positional[0], label: flags['--label'] };
    }
    case 'revoke':
      return { name: 'providers keys revoke', keyId: parseArgs(args, {}, 1, 'providers keys revoke KEY_ID').positional[0] };
    default:
      throw usage('providers keys list|create|revoke');
  }
}

/**
 * Exactly `count` positional arguments and only the listed flags (true: takes a value), each at
 * most once; anything else is a usage error naming `line`.
 */
function parseArgs(args: string[], known: Record<string, boolean>, count: number, line: string) {
  const positional: string[] = [];
  const flags: Record<string, string | undefined> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.startsWith('--')) {
      if (!(arg in known) || arg in flags) throw usage(line);
      const value = known[arg] ? args[++i] : '';
      if (value === undefined) throw usage(line);
      flags[arg] = value;
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== count || positional.some((p) => p === '')) throw usage(line);
  return { positional, flags };
}
