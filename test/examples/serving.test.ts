import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { call } from '../support/http.ts';

// The example frontend's files as the server answers them (docs/partner-guide.md "The example
// frontend"): in development every file the page loads, with its type and the page's CSP; in
// production /examples is an unknown path. The page itself runs in Chromium in
// test/e2e/example-frontend.e2e.test.ts.
const dev = useApp();
const prod = useApp({ NODE_ENV: 'production', ACCESS_CODE_SIGNING_KEY: 'k'.repeat(64) });

const get = (app: typeof dev, path: string, method = 'GET') => fetch(`${app.baseUrl}${path}`, { method, redirect: 'manual' });

/** Whether `source` parses as an ES module (`node --check`): type syntax left in it would be a SyntaxError in a browser too. */
function parsesAsModule(source: string): boolean {
  const dir = mkdtempSync(path.join(tmpdir(), 'examples-check-'));
  try {
    writeFileSync(path.join(dir, 'served.mjs'), source);
    execFileSync(process.execPath, ['--check', path.join(dir, 'served.mjs')], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The relative module specifiers a served script imports (`from './x.ts'`, `import './x.js'`). */
const importsOf = (source: string): string[] => [...source.matchAll(/(?:from|import)\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);

describe('the example frontend outside production', () => {
  it('serves the page as HTML with a CSP that allows only its own origin, and no secret', async () => {
    const res = await get(dev, '/examples/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    // Nothing inline (the CSP would refuse it), nothing from another origin, no key or token.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+=|style="|https?:\/\/|\b(sk|pk|cs)_[0-9A-Za-z]{8}/);
  });

  it('redirects /examples to /examples/, where the page’s relative imports resolve', async () => {
    const res = await get(dev, '/examples');
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/examples/');
  });

  it('serves the page’s scripts and the SDK as JavaScript, every import one it serves, with no type left', async () => {
    const seen = new Set<string>();
    const pending = ['/examples/app.js'];
    while (pending.length > 0) {
      const served = pending.pop()!;
      if (seen.has(served)) continue;
      seen.add(served);
      const res = await get(dev, served);
      expect(res.status, served).toBe(200);
      expect(res.headers.get('content-type'), served).toBe('text/javascript; charset=utf-8');
      const source = await res.text();
      expect(parsesAsModule(source), served).toBe(true);
      // A bare specifier (`@graphql-typed-document-node/core`) would not load in a browser: only type imports name one.
      for (const specifier of importsOf(source)) {
        expect(specifier, `${served} imports ${specifier}`).toMatch(/^\.\.?\//);
        pending.push(new URL(specifier, `http://x${served}`).pathname);
      }
    }
    expect([...seen].sort()).toEqual([
      '/examples/app.js',
      '/examples/sdk/client.ts',
      '/examples/sdk/gql/gql.ts',
      '/examples/sdk/gql/graphql.ts',
      '/examples/sdk/gql/index.ts',
      '/examples/sdk/index.ts',
      '/examples/sdk/operations.ts',
      '/examples/view.js',
    ]);
    const style = await get(dev, '/examples/style.css');
    expect([style.status, style.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
  });

  it('answers any other path under /examples, and other methods, as the catalogue errors', async () => {
    for (const path of [
      '/examples/..%2fpackage.json',
      '/examples/sdk/..%2f..%2fpackage.json',
      '/examples/index.html.bak',
      '/examples/sdk/',
    ]) {
      const res = await call(dev, path);
      expect([res.status, res.body.error.code], path).toEqual([404, 'resource_not_found']);
    }
    const post = await call(dev, '/examples/app.js', { method: 'POST', raw: 'x' });
    expect([post.status, post.body.error.code, post.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'GET, HEAD']);
  });
});

describe('the example frontend in production', () => {
  it('is not served: /examples and every file under it are 404 resource_not_found, like any unknown path', async () => {
    for (const path of ['/examples', '/examples/', '/examples/app.js', '/examples/sdk/index.ts']) {
      const res = await call(prod, path);
      expect([res.status, res.body.error.code], path).toEqual([404, 'resource_not_found']);
      expect(res.headers.get('content-security-policy'), path).toBeNull();
    }
  });
});
