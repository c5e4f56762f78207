import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { preparedRead, preparedWrite, type TxCtx } from '../../db/engine/index.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { notFound, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { noNul, parseInput } from '../../platform/validation.ts';
import { getReseller, storeTrustedDocumentsOnly, type Reseller } from '../resellers/index.ts';
import { TrustedDocumentSchema, type TrustedDocument } from './trusted-documents.entity.ts';

// Trusted documents (docs/partner-guide.md "Trusted documents"): the GraphQL documents a reseller's
// frontends run, registered by the SHA-256 of their exact text, and the setting that holds its
// client-session callers to them. REST, GraphQL and the operator CLI call these same functions.

export type { TrustedDocument } from './trusted-documents.entity.ts';
export type { Reseller } from '../resellers/index.ts';

/** The largest document, in bytes of UTF-8, and the most documents one request registers (docs/errors.md "Limits"). */
export const MAX_DOCUMENT_BYTES = 100 * 1024;
export const MAX_DOCUMENTS_PER_REQUEST = 500;

/** A document's SHA-256 as it names it: 64 lowercase hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Checks a document against the GraphQL schema: undefined when it parses and validates, else the
 * first problem. The schema belongs to the GraphQL edge, so each edge hands its check to the use case.
 */
export type DocumentCheck = (document: string) => string | undefined;

const documentText = z.string().min(1, 'Must not be empty').refine(noNul, 'Must not contain NUL characters');

export const registerTrustedDocumentsInput = z.strictObject({
  documents: z
    .array(
      z.union([
        documentText.describe('A GraphQL document, exactly as the frontend sends it'),
        z.strictObject({
          document: documentText.describe('A GraphQL document, exactly as the frontend sends it'),
          sha256: z
            .string()
            .optional()
            .describe("The document's SHA-256 (64 hex digits), as a manifest names it: checked against the text"),
        }),
      ]),
    )
    .min(1)
    .max(MAX_DOCUMENTS_PER_REQUEST)
    .describe(`The documents to register (1–${MAX_DOCUMENTS_PER_REQUEST}, each at most 100 KB), all or none`),
});
export type RegisterTrustedDocumentsInput = z.input<typeof registerTrustedDocumentsInput>;

/** What a registration answers: every document sent (once each, in the order sent) and how many were new. */
export interface TrustedDocumentRegistration {
  documents: TrustedDocument[];
  registered: number;
}

/**
 * Registers documents for the caller's reseller, all or none: each is checked (size, the hash a
 * manifest names, the schema) before anything is written, so a bad one is 400 `validation_error`
 * naming it (`documents.<index>`) and writes nothing. A document already registered is left as it is.
 */
export function registerTrustedDocuments(
  ctx: TxCtx,
  raw: RegisterTrustedDocumentsInput,
  check: DocumentCheck,
): Promise<TrustedDocumentRegistration> {
  return registerDocuments(ctx.em, resellerOf(ctx).resellerId, raw, check, ctx.clock.now());
}

/** The operator's `documents register` (and the use case's body): the same rules for a reseller named by id. */
export async function registerDocuments(
  em: EntityManager,
  resellerId: string,
  raw: RegisterTrustedDocumentsInput,
  check: DocumentCheck,
  at: Date,
): Promise<TrustedDocumentRegistration> {
  const input = parseInput(registerTrustedDocumentsInput, raw);
  const bySha = new Map<string, string>();
  input.documents.forEach((item, i) => {
    const { document, sha256 } = typeof item === 'string' ? { document: item, sha256: undefined } : item;
    const param = typeof item === 'string' ? `documents.${i}` : `documents.${i}.document`;
    if (Buffer.byteLength(document, 'utf8') > MAX_DOCUMENT_BYTES) {
      throw validationError(param, `A document is at most ${MAX_DOCUMENT_BYTES / 1024} KB of UTF-8`);
    }
    const hash = sha256Hex(document);
    if (sha256 !== undefined && sha256.toLowerCase() !== hash) {
      throw validationError(`documents.${i}.sha256`, `The SHA-256 of this document's text is ${hash}, not ${sha256}`);
    }
    const problem = check(document);
    if (problem !== undefined) throw validationError(param, `Not a valid document for this schema: ${problem}`);
    bySha.set(hash, document);
  });
  await getReseller(em, resellerId);
  const hashes = [...bySha.keys()];
  const ids = hashes.map(() => newId('trustedDocument', at.getTime()));
  // One statement for the whole list; a document registered already (or by a concurrent request) is kept as it is.
  const inserted = await preparedWrite<{ sha256: string }>(
    em,
    `insert into trusted_document (id, reseller_id, sha256, document, created_at)
       select id, ?, sha256, document, ? from unnest(?::text[], ?::text[], ?::text[]) as d(id, sha256, document)
     on conflict (reseller_id, sha256) do nothing
     returning sha256`,
    [resellerId, at, ids, hashes, [...bySha.values()]],
  );
  const rows = await em.find(TrustedDocumentSchema, { resellerId, sha256: { $in: hashes } });
  const byHash = new Map(rows.map((r) => [r.sha256, r]));
  return { documents: hashes.map((h) => byHash.get(h)!), registered: inserted.length };
}

/** GET /trusted_documents: the caller's documents, newest first. */
export function listTrustedDocuments(ctx: Ctx, page: PageArgs): Promise<Page<TrustedDocument>> {
  const { resellerId } = resellerOf(ctx);
  return keysetPage(ctx.em, TrustedDocumentSchema, { resellerId }, page, 'trustedDocument');
}

/** Every document of a reseller, oldest first (the operator's `documents list`). */
export async function listDocuments(em: EntityManager, resellerId: string): Promise<TrustedDocument[]> {
  await getReseller(em, resellerId);
  return em.find(TrustedDocumentSchema, { resellerId }, { orderBy: { id: 'asc' } });
}

/** DELETE /trusted_documents/{sha256}: the document is no longer trusted (every process stops running it within 1 s). */
export function deleteTrustedDocument(ctx: TxCtx, sha256: string): Promise<TrustedDocument> {
  return deleteDocument(ctx.em, resellerOf(ctx).resellerId, sha256);
}

export async function deleteDocument(em: EntityManager, resellerId: string, sha256: string): Promise<TrustedDocument> {
  const document = SHA256_HEX.test(sha256) ? await em.findOne(TrustedDocumentSchema, { resellerId, sha256 }) : null;
  if (!document) throw notFound('trusted document', sha256, 'sha256');
  em.remove(document);
  await em.flush();
  return document;
}

/** The text of a reseller's registered document, or undefined: another reseller's hash is unknown here. */
export async function findTrustedDocument(em: EntityManager, resellerId: string, sha256: string): Promise<string | undefined> {
  const [row] = await preparedRead<{ document: string }>(em, 'select document from trusted_document where reseller_id = ? and sha256 = ?', [
    resellerId,
    sha256,
  ]);
  return row?.document;
}

export const trustedDocumentSettingsInput = z.strictObject({
  trusted_documents_only: z
    .boolean({ error: 'Expected true or false' })
    .describe("true: client-session tokens run only this reseller's trusted documents"),
});
export type TrustedDocumentSettingsInput = z.input<typeof trustedDocumentSettingsInput>;

/** GET /settings/trusted_documents: the caller's own reseller, which holds the setting. */
export function getTrustedDocumentSettings(ctx: Ctx): Promise<Reseller> {
  return getReseller(ctx.em, resellerOf(ctx).resellerId);
}

/** POST /settings/trusted_documents: every process holds client sessions to it within 1 s (TrustedDocumentCache). */
export function setTrustedDocumentsOnly(ctx: TxCtx, raw: TrustedDocumentSettingsInput): Promise<Reseller> {
  const input = parseInput(trustedDocumentSettingsInput, raw);
  return storeTrustedDocumentsOnly(ctx.em, resellerOf(ctx).resellerId, input.trusted_documents_only);
}
