import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { migrate, withStartLock } from '../db/orm.ts';
import { seedDemo } from '../db/seed.ts';
import { systemClock } from '../platform/clock.ts';
import type { Logger } from '../platform/logger.ts';
import { CatalogRejected, importCatalog, progressReporter } from '../modules/catalog/index.ts';
import {
  changeCorsOrigins,
  createApiKey,
  createReseller,
  fundReseller,
  listApiKeys,
  listResellers,
  revokeApiKey,
  setResellerRateLimit,
  setResellerStatus,
  storeTrustedDocumentsOnly,
} from '../modules/resellers/index.ts';
import { createProviderKey, listProviderKeys, revokeProviderKey } from '../modules/providers/index.ts';
import { expireBookingSessions } from '../modules/bookings/index.ts';
import { expireAccessCodes } from '../modules/access-codes/index.ts';
import {
  deleteDocument,
  listDocuments,
  registerDocuments,
  type RegisterTrustedDocumentsInput,
} from '../modules/trusted-documents/index.ts';
import { documentCheck } from '../graphql/document-check.ts';
import { graphqlSchema } from '../graphql/schema.ts';
import { DomainError } from '../platform/errors.ts';
import { describeSeed } from './banner.ts';
import { ReportedError, type Command } from './usage.ts';
import { withTransaction } from '../db/engine/index.ts';

// Operator commands: each prints its result as one JSON document on stdout (logs go to stderr).

/** Reported as its message alone (exit 1). */
export class CommandFailed extends ReportedError {}

type OperatorCommand = Exclude<Command, { name: 'help' | 'serve' | 'worker' | 'print-schema' }>;

export async function runOperatorCommand(command: OperatorCommand, config: Config, log: Logger): Promise<number> {
  // Read and parse before starting a database: a wrong path fails at once.
  const catalog = command.name === 'catalog import' ? readCatalogFile(command.file) : undefined;
  const manifest = command.name === 'documents register' ? readManifest(command.file) : undefined;
  return withDatabase(config, log, async (db, applied) => {
    const em = db.orm.em.fork();
    const now = systemClock.now();
    switch (command.name) {
      case 'migrate':
        // The release step's record (docs/operator-guide.md "Release step"): what this run applied, none when it was up to date.
        return print({ applied, up_to_date: true }, true);
      case 'seed': {
        // Under the start lock: two seeds at once would both find the database empty.
        const seeded = await withStartLock(db.orm, () => seedDemo(em, now), log);
        if (!seeded) throw new CommandFailed('the database already holds resellers; demo data is only seeded on an empty database');
        print(command.json ? seeded : describeSeed(seeded, config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`), command.json);
        return 0;
      }
      case 'resellers list':
        return print(await listResellers(em));
      case 'resellers create': {
        const r = await createReseller(em, { name: command.resellerName, currency: command.currency }, now);
        return print({ id: r.id, name: r.name, currency: r.currency });
      }
      case 'resellers status': {
        const r = await setResellerStatus(em, command.resellerId, command.status);
        return print({ id: r.id, status: r.status });
      }
      case 'resellers fund': {
        const balance = await withTransaction(em, (tx) => fundReseller(tx, command.resellerId, command.amount, now));
        return print({ id: command.resellerId, balance });
      }
      case 'resellers limits': {
        const r = await setResellerRateLimit(em, command.resellerId, command.limit);
        return print({ id: r.id, rate_limit_per_second: r.rateLimitPerSecond, rate_limit_burst: r.rateLimitBurst });
      }
      case 'resellers origins': {
        const origins = await changeCorsOrigins(em, command.resellerId, { add: command.add, remove: command.remove }, now);
        return print({ id: command.resellerId, cors_origins: origins });
      }
      case 'keys list':
        return print(await listApiKeys(em, command.resellerId));
      case 'keys create': {
        const key = await createApiKey(em, command.resellerId, now, command.label);
        return print({ id: key.id, api_key: key.secret, note: 'shown once; store it now' });
      }
      case 'keys revoke': {
        await revokeApiKey(em, command.keyId, now);
        return print({ id: command.keyId, revoked: true });
      }
      case 'providers keys list':
        return print(await listProviderKeys(em, command.providerId));
      case 'providers keys create': {
        const key = await createProviderKey(em, command.providerId, now, command.label);
        return print({ id: key.id, provider_id: command.providerId, api_key: key.secret, note: 'shown once; store it now' });
      }
      case 'providers keys revoke': {
        await revokeProviderKey(em, command.keyId, now);
        return print({ id: command.keyId, revoked: true });
      }
      case 'sessions expire':
        return print({ expired: await expireBookingSessions(em, { clock: systemClock, config, log }) });
      case 'access-codes expire': {
        const { expired, visitsRestored, sessionsExpired } = await expireAccessCodes(em, { clock: systemClock });
        return print({ expired, visits_restored: visitsRestored, sessions_expired: sessionsExpired });
      }
      case 'catalog import':
        return runCatalogImport(em, catalog);
      case 'documents register':
        return print(await registerManifest(em, command.resellerId, manifest!, now));
      case 'documents list':
        return print((await listDocuments(em, command.resellerId)).map(documentListing));
      case 'documents delete': {
        const d = await deleteDocument(em, command.resellerId, command.sha256);
        return print({ reseller_id: command.resellerId, sha256: d.sha256, deleted: true });
      }
      case 'documents only': {
        const r = await storeTrustedDocumentsOnly(em, command.resellerId, command.only);
        return print({ id: r.id, trusted_documents_only: r.trustedDocumentsOnly });
      }
    }
  });
}

function print(result: unknown, pretty = false): 0 {
  console.log(typeof result === 'string' ? result : JSON.stringify(result, null, pretty ? 2 : undefined));
  return 0;
}

/** Every command runs on a migrated database; `run` is also told which migrations this run applied. */
async function withDatabase(config: Config, log: Logger, run: (db: Database, applied: string[]) => Promise<number>): Promise<number> {
  const db = await openDatabase(config, log, 'client');
  try {
    const applied = await migrate(db.orm, log);
    return await run(db, applied);
  } finally {
    await db.close();
  }
}

function readCatalogFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CommandFailed(`catalog import: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CommandFailed(`catalog import: ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * A persisted-documents manifest as GraphQL Code Generator's client preset writes it: an object of
 * SHA-256 hex → document (docs/partner-guide.md "Trusted documents").
 */
function readManifest(file: string): { sha256: string; document: string }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CommandFailed(`documents register: cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CommandFailed(`documents register: ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CommandFailed(`documents register: ${file} is not a manifest: expected {"<sha256>": "<document>", …}`);
  }
  return Object.entries(parsed).map(([sha256, document]) => {
    if (typeof document !== 'string') throw new CommandFailed(`documents register: ${sha256}: the document is not a string`);
    return { sha256, document };
  });
}

/** All or none, in one transaction; a problem names the manifest's hash it is about. */
async function registerManifest(em: EntityManager, resellerId: string, manifest: { sha256: string; document: string }[], at: Date) {
  try {
    const input: RegisterTrustedDocumentsInput = { documents: manifest };
    const r = await withTransaction(em, (tx) => registerDocuments(tx, resellerId, input, documentCheck(graphqlSchema()), at));
    return { reseller_id: resellerId, documents: r.documents.length, registered: r.registered };
  } catch (err) {
    const item = err instanceof DomainError ? /^documents\.(\d+)/.exec(err.param ?? '') : null;
    if (!item) throw err;
    throw new CommandFailed(`documents register: ${manifest[Number(item[1])]?.sha256}: ${(err as DomainError).message}`);
  }
}

function documentListing(d: { id: string; sha256: string; document: string; createdAt: Date }) {
  return { id: d.id, sha256: d.sha256, operations: operationNames(d.document), created_at: d.createdAt.toISOString() };
}

/** The names of a document's operations, for people telling documents apart. */
function operationNames(document: string): string[] {
  try {
    return parse(document).definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION ? [d.name?.value ?? '(anonymous)'] : []));
  } catch {
    return [];
  }
}

async function runCatalogImport(em: EntityManager, input: unknown): Promise<number> {
  const progress = progressReporter(process.stderr);
  try {
    const counts = await importCatalog(em, input, { at: systemClock.now(), onProgress: progress });
    progress.finish();
    return print({ imported: counts });
  } catch (err) {
    progress.finish();
    if (!(err instanceof CatalogRejected)) throw err;
    const lines = [`catalog import: ${err.message}:`, ...err.problems.map((p) => `  ${p.at}: ${p.message}`)];
    if (err.total > err.problems.length) lines.push(`  … and ${err.total - err.problems.length} more`);
    console.error(lines.join('\n'));
    return 1;
  }
}
