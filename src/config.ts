import path from 'node:path';
import { z } from 'zod';

// The only reader of process.env: every setting is parsed here once, all problems reported together.
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  IDEMPOTENCY_WAIT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(90),
  IDEMPOTENCY_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
  GRAPHQL_INTROSPECTION: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  SESSION_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
  OUTBOX_IN_PROCESS: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  OUTBOX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
});

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

/** Test and tool code build a config from defaults plus explicit overrides, never from the process. */
export function configWith(overrides: Record<string, string | undefined>): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...overrides });
}
