import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
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

/**
 * Operator commands print their result on stdout (`seed --demo --json | jq`), so they log to stderr.
 * LOG_FORMAT auto: readable lines on a terminal, one JSON object per line otherwise (a pipe, a file,
 * a log collector).
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_FORMAT'>>,
  to: 'stdout' | 'stderr' = 'stdout',
): Logger {
  const options = { level: config.LOG_LEVEL, redact, base: undefined };
  const fd = to === 'stderr' ? 2 : 1;
  const format = config.LOG_FORMAT ?? 'auto';
  const tty = (fd === 1 ? process.stdout : process.stderr).isTTY === true;
  if (format === 'pretty' || (format === 'auto' && tty)) {
    return pino(options, pretty({ destination: fd, sync: true, colorize: tty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' }));
  }
  return fd === 2 ? pino(options, pino.destination(2)) : pino(options);
}
