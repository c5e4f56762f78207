import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// `npm run lint` holds the module boundaries (docs/architecture.md "Module boundaries"). A resolver or parser
// setting that goes missing makes those rules pass silently, so each is shown to still bite.

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

/** The boundary rules that fire for `code` if it were the file at `path`. */
async function violations(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path });
  return result.messages
    .filter((m) => m.ruleId === 'import-x/no-restricted-paths' || m.ruleId === 'import-x/no-cycle')
    .map((m) => `${m.ruleId}: ${m.message}`);
}

describe('module boundaries (eslint.config.js)', () => {
  it('a service importing another module’s entity or service file › refused; through its index.ts › allowed', async () => {
    expect(
      await violations(
        'src/modules/passes/x.ts',
        "import { ClientSchema } from '../clients/clients.entity.ts';\nexport const x = ClientSchema;\n",
      ),
    ).toEqual([expect.stringMatching(/no-restricted-paths.*clients\.entity\.ts.*through its index\.ts/)]);
    expect(
      await violations(
        'src/modules/passes/x.ts',
        "import { getOwnClient } from '../clients/clients.service.ts';\nexport const x = getOwnClient;\n",
      ),
    ).toEqual([expect.stringMatching(/no-restricted-paths.*clients\.service\.ts.*through its index\.ts/)]);
    expect(
      await violations('src/modules/passes/x.ts', "import { getOwnClient } from '../clients/index.ts';\nexport const x = getOwnClient;\n"),
    ).toEqual([]);
  });

  it('a service, an entity or src/platform importing a surface › refused', async () => {
    for (const [path, from] of [
      ['src/modules/passes/x.ts', './passes.graphql.ts'],
      ['src/modules/passes/passes.entity.ts', './passes.rest.ts'],
      ['src/platform/x.ts', '../rest/envelope.ts'],
      ['src/modules/clients/clients.service.ts', '../../graphql/builder.ts'],
    ]) {
      expect(await violations(path, `import * as m from '${from}';\nexport const x = m;\n`), `${path} → ${from}`).toContainEqual(
        expect.stringMatching(/no-restricted-paths.*never import a surface/),
      );
    }
  });

  it('GraphQL types may reference another module’s GraphQL types; a resolver may not reach past a service', async () => {
    expect(
      await violations(
        'src/modules/spa/spa.graphql.ts',
        "import { ProviderRef } from '../providers/providers.graphql.ts';\nexport const x = ProviderRef;\n",
      ),
    ).toEqual([]);
    expect(
      await violations(
        'src/modules/spa/spa.graphql.ts',
        "import { listProviders } from '../providers/list-providers.ts';\nexport const x = listProviders;\n",
      ),
    ).toEqual([expect.stringMatching(/no-restricted-paths/)]);
  });

  it('GraphQL types reading a REST presenter, their own module’s or another’s › refused; the use case’s result › allowed', async () => {
    const path = 'src/modules/bookings/bookings.graphql.ts';
    for (const from of ['./bookings.presenter.ts', '../passes/passes.presenter.ts']) {
      expect(await violations(path, `import * as m from '${from}';\nexport const x = m;\n`), from).toContainEqual(
        expect.stringMatching(/no-restricted-paths.*never a REST presenter/),
      );
    }
    expect(await violations(path, "import { spaBooked } from './initiation.ts';\nexport const x = spaBooked;\n")).toEqual([]);
  });

  it('a runtime import cycle › refused; a type-only one › allowed', async () => {
    // get-client.ts imports passes.service.ts at run time, so the service importing it back is a cycle.
    const path = 'src/modules/passes/passes.service.ts';
    expect(await violations(path, "import { getClient } from './get-client.ts';\nexport const x = getClient;\n")).toEqual([
      expect.stringMatching(/no-cycle/),
    ]);
    expect(await violations(path, "import type { ClientView } from './get-client.ts';\nexport type X = ClientView;\n")).toEqual([]);
  });

  it("outside src/db/engine: Kysely, pg's internals, MikroORM's connection layer, an engine file past index.ts and a bare em.transactional › refused", async () => {
    const engineRules = async (path: string, code: string) =>
      (await eslint.lintText(code, { filePath: path }))[0]!.messages
        .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
        .map((m) => m.message);
    const service = 'src/modules/passes/x.ts';
    expect(await engineRules(service, "import { sql } from 'kysely';\nexport const x = sql;\n")).toEqual([expect.stringMatching(/Kysely/)]);
    expect(await engineRules(service, "import Result from 'pg/lib/result.js';\nexport const x = Result;\n")).toEqual([
      expect.stringMatching(/pg's internals/),
    ]);
    expect(
      await engineRules(service, "import { PostgreSqlDriver } from '@mikro-orm/postgresql';\nexport const x = PostgreSqlDriver;\n"),
    ).toEqual([expect.stringMatching(/connection layer/)]);
    expect(
      await engineRules(service, "import { queueWrite } from '../../db/engine/prepared-read.ts';\nexport const x = queueWrite;\n"),
    ).toEqual([expect.stringMatching(/through src\/db\/engine\/index\.ts/)]);
    // From src/db itself, the same file by its relative path.
    expect(
      await engineRules('src/db/seed-x.ts', "import { inTransaction } from './engine/transaction.ts';\nexport const x = inTransaction;\n"),
    ).toEqual([expect.stringMatching(/through src\/db\/engine\/index\.ts/)]);
    expect(
      await engineRules(
        service,
        "import type { EntityManager } from '@mikro-orm/postgresql';\nexport const x = (em: EntityManager) => em.transactional(async () => 1);\n",
      ),
    ).toEqual([expect.stringMatching(/Open a transaction with inTransaction/)]);
    expect(
      await engineRules(
        service,
        "import { queueWrite, withTransaction } from '../../db/engine/index.ts';\nexport const x = [queueWrite, withTransaction];\n",
      ),
    ).toEqual([]);
    expect(await engineRules('src/db/engine/x.ts', "import { sql } from 'kysely';\nexport const x = sql;\n")).toEqual([]);
  });

  it('a raw execute outside src/db/engine and src/db/migrations › refused, pointing to "Sending SQL"; the engine’s calls › allowed', async () => {
    const sqlRules = async (path: string, code: string) =>
      (await eslint.lintText(code, { filePath: path }))[0]!.messages
        .filter((m) => m.ruleId === 'no-restricted-syntax')
        .map((m) => m.message);
    const em = "import type { EntityManager } from '@mikro-orm/postgresql';\n";
    for (const [path, call] of [
      ['src/modules/passes/x.ts', "em.execute('select 1')"],
      ['src/platform/x.ts', "em.fork().execute('update outbox set attempts = 0', [], 'run')"],
      ['src/server.ts', "em.getConnection().execute('select 1')"],
      ['src/db/seed.ts', "em.execute('select id from class_category')"],
    ]) {
      expect(await sqlRules(path, `${em}export const x = (em: EntityManager) => ${call};\n`), path).toEqual([
        expect.stringMatching(/Send SQL through src\/db\/engine\/index\.ts.*docs\/architecture\.md "Sending SQL"/),
      ]);
    }
    const engineCall =
      "import { preparedRead } from '../../db/engine/index.ts';\nexport const x = (em: EntityManager) => preparedRead(em, 'select 1', []);\n";
    expect(await sqlRules('src/modules/passes/x.ts', em + engineCall)).toEqual([]);
    for (const path of ['src/db/engine/x.ts', 'src/db/migrations/Migration20990101000000_x.ts']) {
      expect(await sqlRules(path, `${em}export const x = (em: EntityManager) => em.execute('select 1');\n`), path).toEqual([]);
    }
  });

  it('code outside the modules › a module file past its index.ts refused; its index.ts and the files the surfaces wire in allowed', async () => {
    expect(
      await violations(
        'src/cli/x.ts',
        "import { importCatalog } from '../modules/catalog/catalog.import.ts';\nexport const x = importCatalog;\n",
      ),
    ).toEqual([expect.stringMatching(/no-restricted-paths.*through its index\.ts/)]);
    expect(
      await violations('src/cli/x.ts', "import { importCatalog } from '../modules/catalog/index.ts';\nexport const x = importCatalog;\n"),
    ).toEqual([]);
    expect(
      await violations('src/rest/x.ts', "import { passRoutes } from '../modules/passes/passes.rest.ts';\nexport const x = passRoutes;\n"),
    ).toEqual([]);
  });
});
