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

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({ level: config.LOG_LEVEL, redact, base: undefined });
}
