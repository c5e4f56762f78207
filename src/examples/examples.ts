import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stripTypeScriptTypes } from 'node:module';
import { DomainError } from '../platform/errors.ts';
import { sendError } from '../rest/http.ts';

// The example partner frontend (docs/partner-guide.md "The example frontend"): the page in
// examples/ and the SDK it imports, served under /examples outside production only (server.ts asks
// config). Every byte the page loads comes from here, so it runs with `script-src 'self'` and no CDN.
//
// The SDK is TypeScript with erasable syntax only (packages/sdk/tsconfig.json `erasableSyntaxOnly`),
// so Node's own type stripping turns each file into the JavaScript a browser runs, with no build step
// and no bundler. Its relative imports keep their `.ts` names: a browser decides by Content-Type, not
// by extension, and each name is served below. Its type-only imports (`@graphql-typed-document-node/core`)
// vanish with the types. Files are read on each request, so an edit shows on reload.

const PAGE_DIR = new URL('../../examples/', import.meta.url);
const SDK_DIR = new URL('../../packages/sdk/src/', import.meta.url);

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** What the page may load, by path under /examples/: nothing else is served, so no path reaches another file. */
const FILES: Record<string, { file: URL; type: string; strip?: boolean }> = {
  '': { file: new URL('index.html', PAGE_DIR), type: 'text/html; charset=utf-8' },
  'app.js': { file: new URL('app.js', PAGE_DIR), type: JAVASCRIPT },
  'view.js': { file: new URL('view.js', PAGE_DIR), type: JAVASCRIPT },
  'style.css': { file: new URL('style.css', PAGE_DIR), type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(
    ['index.ts', 'client.ts', 'operations.ts', 'gql/index.ts', 'gql/gql.ts', 'gql/graphql.ts'].map((name) => [
      `sdk/${name}`,
      { file: new URL(name, SDK_DIR), type: JAVASCRIPT, strip: true },
    ]),
  ),
};

const HEADERS = {
  // Edits show on reload; nothing the page holds belongs in a cache.
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  // The token is in the fragment, which no Referer carries; no-referrer keeps the page's path out as well.
  'Referrer-Policy': 'no-referrer',
  // Scripts and requests from this origin only; no form may submit (the token box is read by script,
  // so even with scripts off the token never goes out in a form's URL).
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** Whether the path is the example's: /examples, or anything under /examples/. */
export const isExamplePath = (path: string): boolean => path === '/examples' || path.startsWith('/examples/');

/** Answers an example path: a file of the page or the SDK, the redirect to /examples/, or 404 like any unknown path. */
export async function serveExample(req: IncomingMessage, res: ServerResponse, path: string, requestId: string): Promise<void> {
  // The page's relative imports need the trailing slash.
  if (path === '/examples') {
    res.writeHead(308, { Location: '/examples/', 'Content-Length': 0 });
    return void res.end();
  }
  const entry = FILES[path.slice('/examples/'.length)];
  if (!entry) return sendError(res, new DomainError('resource_not_found', `No such path: ${req.method} ${path}`), requestId);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, new DomainError('method_not_allowed', `${path} takes GET`, { headers: { Allow: 'GET, HEAD' } }), requestId);
  }
  const text = await readFile(entry.file, 'utf8');
  const body = entry.strip ? stripTypeScriptTypes(text, { mode: 'strip' }) : text;
  res.writeHead(200, { ...HEADERS, 'Content-Type': entry.type, 'Content-Length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}
