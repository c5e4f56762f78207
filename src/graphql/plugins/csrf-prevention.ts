import { DomainError } from '../../platform/errors.ts';
import type { RequestPlugin } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';

/** What a page elsewhere can have a browser send without a CORS preflight (src/graphql/transport-errors.ts refuses them before authentication). */
const SIMPLE_REQUEST_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * Headers a browser sends cross-origin only after a CORS preflight the origin passed: the
 * credentials (`Authorization`, `Service-Lookup-Token`) and the headers clients send for CSRF
 * prevention (yoga's `x-graphql-yoga-csrf`, and `graphql-require-preflight`).
 */
const PREFLIGHTED_HEADERS = ['authorization', 'service-lookup-token', 'graphql-require-preflight', 'x-graphql-yoga-csrf'];

/**
 * CSRF prevention, as yoga's CSRF prevention plugin rules it (docs/partner-guide.md "Calling from
 * a browser"): a request that a browser could send without a preflight (a GET, or a POST of a form or
 * text/plain type) runs only with a header that forces one. Every request src/graphql/http.ts hands
 * yoga has authenticated with such a header and a JSON type, so this refusal is a second line; when
 * it fires, it is the catalogue's 403 `permission_denied`, never yoga's own shape.
 */
export function useCsrfPrevention(): RequestPlugin {
  return {
    onRequestParse({ request, serverContext }) {
      const type = request.headers.get('content-type')?.toLowerCase();
      if (type && !SIMPLE_REQUEST_TYPES.some((simple) => type.startsWith(simple))) return;
      if (PREFLIGHTED_HEADERS.some((name) => request.headers.has(name))) return;
      throw asGraphQLError(
        new DomainError(
          'permission_denied',
          'A request a browser can send from any site without a CORS preflight must carry Authorization (or graphql-require-preflight)',
        ),
        serverContext.ctx?.requestId ?? serverContext.requestId,
      );
    },
  };
}
