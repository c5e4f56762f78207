import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killStartedProcesses, runCli, type CliRun } from '../ops/processes.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { call } from '../support/http.ts';

// The operator CLI's `documents …` (docs/operator-guide.md "Operator CLI") as an operator runs it: a
// child process on this app's database, registering the manifest GraphQL Code Generator's client
// preset writes ({"<sha256>": "<document>"}), checked through the rows and through /graphql.

const T = 120_000;
const app = useApp();
const dir = mkdtempSync(path.join(tmpdir(), 'trusted-documents-'));
afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const cli = (...args: string[]) => runCli(args, { DATABASE_URL: app.databaseUrl });
const rows = async (resellerId: string) =>
  (await app.sql<{ sha256: string }>('select sha256 from trusted_document where reseller_id = ? order by id', [resellerId])).map(
    (r) => r.sha256,
  );

function printed<T = any>(run: CliRun): T {
  expect(run.code, `${run.args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

function manifest(name: string, entries: Record<string, string>): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(entries, null, 2));
  return file;
}

const PASSES = 'query Passes { passes(first: 5) { edges { node { id name } } } }';
const ISSUERS = 'query Issuers { issuers(first: 5) { edges { node { id } } } }';

describe('documents register, list, delete, only', () => {
  it(
    'registers a client-preset manifest, lists it, runs it by documentId, deletes one and sets the switch',
    async () => {
      const r = await createReseller(app);
      const file = manifest('persisted-documents.json', { [sha256(PASSES)]: PASSES, [sha256(ISSUERS)]: ISSUERS });
      expect(printed(await cli('documents', 'register', r.id, file))).toEqual({ reseller_id: r.id, documents: 2, registered: 2 });
      expect(printed(await cli('documents', 'register', r.id, file))).toMatchObject({ registered: 0 });
      expect(await rows(r.id)).toEqual([sha256(PASSES), sha256(ISSUERS)]);

      const listed = printed<{ sha256: string; operations: string[] }[]>(await cli('documents', 'list', r.id));
      expect(listed.map((d) => [d.sha256, d.operations])).toEqual([
        [sha256(PASSES), ['Passes']],
        [sha256(ISSUERS), ['Issuers']],
      ]);

      const run = await call(app, '/graphql', { key: r.key, body: { documentId: `sha256:${sha256(PASSES)}` } });
      expect(run.status).toBe(200);
      expect(run.body.errors).toBeUndefined();

      expect(printed(await cli('documents', 'delete', r.id, sha256(ISSUERS)))).toEqual({
        reseller_id: r.id,
        sha256: sha256(ISSUERS),
        deleted: true,
      });
      expect(await rows(r.id)).toEqual([sha256(PASSES)]);

      expect(printed(await cli('documents', 'only', r.id, 'on'))).toEqual({ id: r.id, trusted_documents_only: true });
      const [row] = await app.sql<{ trusted_documents_only: boolean }>('select trusted_documents_only from reseller where id = ?', [r.id]);
      expect(row.trusted_documents_only).toBe(true);
    },
    T,
  );

  it(
    'a manifest whose hash is not its document’s, or with a document invalid for the schema › exit 1 naming it, nothing written',
    async () => {
      const r = await createReseller(app);
      const wrongHash = manifest('wrong-hash.json', { [sha256(PASSES)]: PASSES, [sha256(PASSES).replace(/^./, '0')]: ISSUERS });
      const mismatch = await cli('documents', 'register', r.id, wrongHash);
      expect(mismatch.code).toBe(1);
      expect(mismatch.stderr).toMatch(/SHA-256/);
      const invalid = manifest('invalid.json', { [sha256(PASSES)]: PASSES, [sha256('query { nope }')]: 'query { nope }' });
      const refused = await cli('documents', 'register', r.id, invalid);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(sha256('query { nope }'));
      expect(await rows(r.id)).toEqual([]);
    },
    T,
  );

  it(
    'a file that is not a manifest › exit 1 before any database work; bad arguments › usage, exit 2',
    async () => {
      const r = await createReseller(app);
      const notJson = path.join(dir, 'not.json');
      writeFileSync(notJson, 'nope');
      const run = await cli('documents', 'register', r.id, notJson);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/not valid JSON/);
      const usage = await cli('documents', 'only', r.id, 'maybe');
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/documents only RESELLER_ID on\|off/);
    },
    T,
  );
});
