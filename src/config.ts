import path from 'node:path';
import { z } from 'zod';

// The only reader of process.env: every setting is parsed here once, all problems reported together.
export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    PUBLIC_BASE_URL: z.url().optional(),
    // `worker` answers GET /metrics and /healthz on this port when set (docs/operator-guide.md "Metrics").
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
    // Read replicas, comma-separated: lag-tolerant reads go there (docs/operator-guide.md "Read replicas").
    DATABASE_REPLICA_URLS: z
      .string()
      .optional()
      .refine((v) => listed(v).every((url) => /^postgres(ql)?:\/\//.test(url)), 'each must be a postgres:// URL'),
    DATA_DIR: z.string().default('.data'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    // false: `serve` leaves migrating to a release step (`migrate` first) and refuses a schema that is behind (docs/operator-guide.md "Release step").
    MIGRATE_ON_START: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    // `plain` runs the data layer on its dependencies' public APIs only (src/db/engine/README.md).
    DB_ENGINE: z.enum(['tuned', 'plain']).default('tuned'),
    IDEMPOTENCY_WAIT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
    IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(90),
    IDEMPOTENCY_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
    GRAPHQL_INTROSPECTION: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    SESSION_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
    OUTBOX_IN_PROCESS: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    OUTBOX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
    // How long a stopping instance keeps serving while /readyz says 503 (docs/operator-guide.md "Stopping an instance").
    SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
    // Open subscription streams one process serves at most; one more is 503 too_many_subscriptions (docs/partner-guide.md "Live booking status").
    SUBSCRIPTIONS_MAX: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    // Where mail goes (docs/partner-guide.md "E-mail"): smtp:// or smtps://, with user:password@ when the server wants them.
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
      .optional(),
    MAIL_FROM: z.string().min(3).default('Reseller Gateway <no-reply@localhost>'),
    // Webhooks (docs/partner-guide.md "Webhooks"): private targets only when allowed (tests, local receivers); one attempt's time limit.
    WEBHOOK_ALLOW_PRIVATE_URLS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    // Rate limits (docs/operator-guide.md "Rate limits"): shared through Redis when REDIS_URL is set, in-process otherwise.
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
    RATE_LIMIT_REDIS_PREFIX: z.string().min(1).default('rl'),
    RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(1).default(100),
    RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
    RATE_LIMIT_FAILED_AUTH_PER_SECOND: z.coerce.number().int().min(1).default(10),
    RATE_LIMIT_FAILED_AUTH_BURST: z.coerce.number().int().min(1).default(50),
    RATE_LIMIT_REDEEM_PER_SECOND: z.coerce.number().int().min(1).default(5),
    RATE_LIMIT_REDEEM_BURST: z.coerce.number().int().min(1).default(20),
    // How many proxies in front of the service append to X-Forwarded-For (0: the socket's address is the client's).
    TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
    // 32 bytes, base64 or hex: the key that seals secrets kept at rest (docs/operator-guide.md "Secrets at rest").
    SECRETS_KEY: z
      .string()
      .optional()
      .refine((v) => v === undefined || secretsKeyBytes(v) !== undefined, 'must be 32 bytes, base64 or hex'),
    // At least 32 bytes, base64 or hex: the key access-code QR payloads are signed with (docs/partner-guide.md "Access codes").
    ACCESS_CODE_SIGNING_KEY: z
      .string()
      .optional()
      .refine((v) => v === undefined || accessCodeSigningKeyBytes(v) !== undefined, 'must be at least 32 bytes, base64 or hex'),
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.ACCESS_CODE_SIGNING_KEY !== undefined, {
    path: ['ACCESS_CODE_SIGNING_KEY'],
    message: 'required when NODE_ENV is production (docs/partner-guide.md "Access codes")',
  });

/** The items of a comma-separated setting, trimmed, empty ones left out. */
function listed(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** DATABASE_REPLICA_URLS as a list; empty when unset. */
export const replicaUrlsOf = (config: Pick<Config, 'DATABASE_REPLICA_URLS'>): string[] => listed(config.DATABASE_REPLICA_URLS);

/** SECRETS_KEY as bytes: 64 hex characters or base64 (standard or url-safe) of exactly 32 bytes. */
export function secretsKeyBytes(value: string): Buffer | undefined {
  const bytes = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/** ACCESS_CODE_SIGNING_KEY as bytes: hex (an even number of digits) or base64 (standard or url-safe), at least 32 bytes. */
export function accessCodeSigningKeyBytes(value: string): Buffer | undefined {
  const hex = /^(?:[0-9a-f]{2})+$/i.test(value);
  if (!hex && !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined;
  const bytes = Buffer.from(value, hex ? 'hex' : 'base64');
  return bytes.length >= 32 ? bytes : undefined;
}

export type Config = Readonly<z.infer<typeof configSchema>> & { readonly dataDir: string };

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
  }
  return Object.freeze({ ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) });
}

/** DB_ENGINE alone, for code that opens a database without a whole configuration (tests, benches, tools). */
export function engineFromEnv(env: Record<string, string | undefined> = process.env): Config['DB_ENGINE'] {
  const parsed = configSchema.shape.DB_ENGINE.safeParse(env.DB_ENGINE);
  if (!parsed.success) throw new ConfigError(`invalid configuration:\n  DB_ENGINE: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Test and tool code build a config from defaults plus explicit overrides, never from the process. */
export function configWith(overrides: Record<string, string | undefined>): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...overrides });
}
