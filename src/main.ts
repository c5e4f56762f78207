#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { loadConfig, ConfigError } from './config.ts';
import { DomainError } from './platform/errors.ts';
import { createLogger, type Logger } from './platform/logger.ts';
import { parseCommand, ReportedError, USAGE, UsageError } from './cli/usage.ts';
import { missingServerFlags, relaunchWithServerFlags } from './cli/node-flags.ts';

// The CLI entry: the command line is checked in full first (src/cli/usage.ts), then the
// configuration, and only then are the command's modules loaded and a database opened.

let log: Logger | undefined;

async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv);
  if (command.name === 'help') {
    (command.exitCode === 0 ? console.log : console.error)(USAGE);
    return command.exitCode;
  }
  if (command.name === 'print-schema') return printSchemas();
  const service = command.name === 'serve' || command.name === 'worker';
  // `npm start` passes the server's Node flags itself; any other way in runs again with them.
  if (service && missingServerFlags().length > 0) return relaunchWithServerFlags();
  const config = loadConfig();
  log = createLogger(config, service ? 'stdout' : 'stderr');
  if (service) {
    const { serve, worker } = await import('./cli/serve.ts');
    return command.name === 'serve' ? serve(config, log, command.workers, { migrate: command.migrate }) : worker(config, log);
  }
  const { runOperatorCommand } = await import('./cli/operator.ts');
  return runOperatorCommand(command, config, log);
}

async function printSchemas(): Promise<number> {
  const { printedSchema } = await import('./graphql/schema.ts');
  const { openApiDocument } = await import('./rest/openapi.ts');
  const { routes } = await import('./rest/router.ts');
  writeFileSync('schema.graphql', printedSchema());
  writeFileSync('docs/openapi.json', `${JSON.stringify(openApiDocument(routes), null, 2)}\n`);
  console.log('wrote schema.graphql and docs/openapi.json');
  return 0;
}

/** One line per failure; the stack only when LOG_LEVEL asks for debugging. */
function report(err: unknown): number {
  if (err instanceof UsageError) {
    console.error(err.message);
    return 2;
  }
  if (err instanceof ConfigError || err instanceof ReportedError) console.error(err.message);
  else if (err instanceof DomainError) console.error(`${err.code}: ${err.message}${err.param ? ` (${err.param})` : ''}`);
  else {
    const [firstLine] = String((err as Error)?.message ?? err).split('\n');
    console.error(`error: ${firstLine}${log?.isLevelEnabled('debug') ? '' : ' (LOG_LEVEL=debug shows more)'}`);
    log?.debug({ err }, 'failed');
  }
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = report(err);
  },
);
