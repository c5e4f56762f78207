import { pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

// Secrets never reach the log: headers that carry them are redacted wherever they appear.
const redact = [
  'req.headers.authorization',
  'req.headers["service-lookup-token"]',
  '*.authorization',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.token',
];

/** Operator commands print their result on stdout (`seed --demo --json | jq`), so they log to stderr. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, to: 'stdout' | 'stderr' = 'stdout'): Logger {
  const options = { level: config.LOG_LEVEL, redact, base: undefined };
  return to === 'stderr' ? pino(options, pino.destination(2)) : pino(options);
}
