import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams } from 'graphql-yoga';
import { SHA256_HEX, type TrustedDocumentCache } from '../../modules/trusted-documents/index.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { DomainError, validationError } from '../../platform/errors.ts';
import { clientSessionOf, resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { RequestPlugin, ServerContext } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';

/** How long a browser may keep a persisted query's answer (docs/partner-guide.md "Trusted documents"). */
export const PERSISTED_GET_MAX_AGE_SECONDS = 10;

/** The two request parameters that name a document by its hash, as `param` names them. */
const DOCUMENT_ID = 'documentId';
const APOLLO_HASH = 'extensions.persistedQuery.sha256Hash';

/** A request naming a document by hash: the hash, and where it was sent. */
interface DocumentId {
  sha256: string;
  param: typeof DOCUMENT_ID | typeof APOLLO_HASH;
}

/**
 * Trusted documents on /graphql (docs/partner-guide.md "Trusted documents"): a request may name a
 * registered document of its reseller by hash instead of sending `query`, as GraphQL over HTTP's
 * persisted documents (`documentId: "sha256:<hex>"`, JSON body or GET query string) or Apollo's
 * `extensions.persistedQuery.sha256Hash`. src/graphql/http.ts authenticated the caller before yoga,
 * so the lookup is per reseller: another reseller's hash is unknown here. A client-session caller of
 * a reseller with `trusted_documents_only` runs nothing else. yoga's persisted-operations plugin
 * swaps the document in, so the parse and validation caches and every later stage see a plain `query`.
 */
export function useTrustedDocuments(cache: TrustedDocumentCache): RequestPlugin[] {
  // Per request (yoga's server context): the hash it named, once checked.
  const named = new WeakMap<object, DocumentId>();
  const requestError = (err: DomainError, context: ServerContext) => asGraphQLError(err, context.ctx?.requestId ?? context.requestId);

  const naming: RequestPlugin = {
    // yoga's GET parser reads only query, variables, operationName and extensions: documentId is taken from the URL here.
    onRequestParse({ request, url }) {
      if (request.method !== 'GET') return;
      const documentId = url.searchParams.get(DOCUMENT_ID);
      if (documentId === null) return;
      return {
        onRequestParseDone({ requestParserResult, setRequestParserResult }) {
          if (!Array.isArray(requestParserResult)) setRequestParserResult({ ...requestParserResult, documentId } as GraphQLParams);
        },
      };
    },

    async onParams({ params, context }) {
      const { ctx } = context;
      if (!ctx) return;
      let id: DocumentId | undefined;
      try {
        id = documentIdOf(params);
        if (typeof params.query === 'string') {
          // An Apollo client sends the query beside its hash after a miss: the hash must be the query's own.
          if (id && sha256Hex(params.query) !== id.sha256) {
            throw validationError(id.param, `This is not the SHA-256 of the \`query\` sent beside it (${sha256Hex(params.query)})`);
          }
          if (await trustedOnly(cache, ctx)) {
            throw new DomainError(
              'document_not_trusted',
              'This token runs only its reseller\'s trusted documents: send `documentId` (docs/partner-guide.md "Trusted documents")',
            );
          }
          return;
        }
      } catch (err) {
        if (err instanceof DomainError) throw requestError(err, context);
        throw err;
      }
      if (id) named.set(context, id);
    },
  };

  const swapping = usePersistedOperations<ServerContext>({
    // Refused above for the callers held to trusted documents; everyone else may send any document.
    allowArbitraryOperations: true,
    extractPersistedOperationId: (_params, _request, context) => named.get(context)?.sha256 ?? null,
    getPersistedOperation: async (sha256, _request, { ctx }) =>
      ctx ? ((await cache.document(ctx.em, resellerOf(ctx).resellerId, sha256)) ?? null) : null,
    customErrors: {
      keyNotFound: ({ context }) =>
        requestError(validationError('query', 'A GraphQL document is required in `query`, or a registered one in `documentId`'), context),
      notFound: ({ context }) =>
        requestError(
          new DomainError('persisted_document_not_found', 'This reseller has no trusted document with this id', {
            param: named.get(context)?.param ?? DOCUMENT_ID,
          }),
          context,
        ),
    },
  }) as RequestPlugin;

  const caching: RequestPlugin = {
    // A query named by hash over GET, answered without errors, may be kept by the browser that asked, briefly:
    // the URL names the document and variables, and Authorization the caller. Every other answer keeps today's headers.
    onResultProcess({ request, result, setResult, serverContext }) {
      if (request.method !== 'GET' || !named.has(serverContext)) return;
      if (Array.isArray(result) || !('data' in result) || result.errors?.length) return;
      const http = result.extensions?.http as { headers?: Record<string, string> } | undefined;
      setResult({
        ...result,
        extensions: {
          ...result.extensions,
          http: {
            ...http,
            headers: { ...http?.headers, 'Cache-Control': `private, max-age=${PERSISTED_GET_MAX_AGE_SECONDS}`, Vary: 'Authorization' },
          },
        },
      });
    },
  };

  return [naming, swapping, caching];
}

/** Whether this caller runs only its reseller's trusted documents: a client-session token of a reseller with the setting on. */
async function trustedOnly(cache: TrustedDocumentCache, ctx: Ctx): Promise<boolean> {
  return clientSessionOf(ctx) !== undefined && cache.trustedOnly(ctx.em, resellerOf(ctx).resellerId);
}

/** The hash a request names its document by, checked; undefined when it names none. */
function documentIdOf(params: GraphQLParams & { documentId?: unknown }): DocumentId | undefined {
  if (params.documentId !== undefined && params.documentId !== null) {
    const match = typeof params.documentId === 'string' ? /^sha256:([0-9a-f]{64})$/.exec(params.documentId) : null;
    if (!match) throw validationError(DOCUMENT_ID, 'documentId is "sha256:" and the 64 lowercase hex digits of the document\'s SHA-256');
    return { sha256: match[1], param: DOCUMENT_ID };
  }
  const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (persisted === undefined || persisted === null) return undefined;
  if (persisted.version !== 1 || typeof persisted.sha256Hash !== 'string' || !SHA256_HEX.test(persisted.sha256Hash)) {
    throw validationError(APOLLO_HASH, 'persistedQuery is {"version": 1, "sha256Hash": "<64 lowercase hex digits>"}');
  }
  return { sha256: persisted.sha256Hash, param: APOLLO_HASH };
}
