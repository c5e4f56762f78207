import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { configWith, type Config } from '../../src/config.ts';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { DefaultLogger, type LogContext, type LoggerNamespace, type LoggerOptions } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions, type Orm } from '../../src/db/orm.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildServer, warmUp } from '../../src/server.ts';
import { withDatabase } from './global-setup.ts';

export interface TestApp {
  baseUrl: string;
  orm: Orm;
  clock: ManualClock;
  config: Config;
  databaseUrl: string;
  /** Runs SQL against this app's database (assertions on rows, ledgers, outbox). */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  /** SQL statements the app's ORM has sent (app.sql's included) since the last reset; set by startApp. */
  queries?: {
    readonly count: number;
    readonly ownCount: number;
    readonly statements: readonly string[];
    readonly ownStatements: readonly string[];
    reset(): void;
  };
  close(): Promise<void>;
}

/**
 * Tests send requests faster than any client should, and from one address: their apps take the
 * rate limits out of the way unless a test sets its own (test/rate-limits holds the limits to
 * their defaults and to lower ones).
 */
export const UNLIMITED: Record<string, string> = Object.fromEntries(
  [
    'RATE_LIMIT_PER_SECOND',
    'RATE_LIMIT_BURST',
    'RATE_LIMIT_FAILED_AUTH_PER_SECOND',
    'RATE_LIMIT_FAILED_AUTH_BURST',
    'RATE_LIMIT_REDEEM_PER_SECOND',
    'RATE_LIMIT_REDEEM_BURST',
  ].map((name) => [name, '1000000']),
);

/**
 * The real server, in-process, on its own freshly cloned database and a free port.
 * The clock is manual so tests can move time; it starts at the real now.
 */
export async function startApp(overrides: Record<string, string> = {}): Promise<TestApp> {
  const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
  await createDatabaseIfMissing(inject('adminUrl'), database, inject('templateDatabase'));
  const databaseUrl = withDatabase(inject('adminUrl'), database);
  const config = configWith({ DATABASE_URL: databaseUrl, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...UNLIMITED, ...overrides });
  const log = createLogger(config);
  const counter = new StatementCounter({ writer: () => {} });
  const orm = await MikroORM.init({ ...ormOptions(databaseUrl, config.DB_POOL_MAX), loggerFactory: () => counter });
  const clock = new ManualClock();
  await warmUp({ orm, config, log });
  const server: http.Server = buildServer({ orm, config, clock, log });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    orm,
    clock,
    config,
    databaseUrl,
    sql: (query, params = []) => orm.em.fork().execute(query, params as unknown[]),
    queries: counter,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await orm.close();
    },
  };
}

/**
 * The ORM reports every statement it executes to its logger (whatever the debug setting, which
 * only decides what gets written): counting there sees each statement, BEGIN and COMMIT included.
 */
class StatementCounter extends DefaultLogger {
  statements: string[] = [];
  constructor(options: LoggerOptions) {
    super(options);
  }
  get count(): number {
    return this.statements.length;
  }
  /** Statements besides the API-key lookup, which runs only when the 500 ms key cache lapses (src/platform/auth.ts). */
  get ownStatements(): string[] {
    return this.statements.filter((q) => !/\bfrom (api_key|provider_api_key)\b/.test(q));
  }
  get ownCount(): number {
    return this.ownStatements.length;
  }
  /** It takes every statement (our prepared statements are reported only to a logger that takes them: src/db/engine/prepared-read.ts). */
  override isEnabled(namespace: LoggerNamespace, context?: LogContext): boolean {
    return namespace === 'query' || super.isEnabled(namespace, context);
  }
  override logQuery(context: LogContext): void {
    if ((context.namespace ?? 'query') === 'query') this.statements.push(context.query ?? '');
  }
  reset(): void {
    this.statements = [];
  }
}

/**
 * One line at the top of a test file: the app starts before the file's tests, its clock is set
 * back after each test, and it closes after the file. Read `app` inside tests and hooks (a hook
 * the file adds after this line runs after the app started). `now` fixes the file's "now": the
 * clock starts there and returns there after each test; without it, the clock starts at the real
 * now and is set to the real now after each test. Call it twice for two apps.
 */
export function useApp(overrides: Record<string, string> = {}, { now }: { now?: Date } = {}): TestApp {
  let started: TestApp | undefined;
  const startOfTest = () => now ?? new Date();
  beforeAll(async () => {
    started = await startApp(overrides);
    started.clock.set(startOfTest());
  });
  afterEach(() => {
    started?.clock.set(startOfTest());
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as TestApp, {
    get(_, prop) {
      if (!started) throw new Error('useApp(): the app is used before beforeAll started it');
      const value = Reflect.get(started, prop, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}
