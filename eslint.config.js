// Lint: generic TypeScript hygiene plus the module boundaries of docs/architecture.md "Module boundaries".
// The boundary zones match resolved file paths, so a relative path of any depth is caught.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const modules = readdirSync('src/modules', { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const surfaces = ['src/rest/**', 'src/graphql/**', 'src/modules/*/*.graphql.ts', 'src/modules/*/*.rest.ts', 'src/modules/*/*.page.ts'];

/** One way to open a transaction: the engine's inTransaction, withTransaction and inSavepoint. */
const noBareTransactional = {
  selector: "CallExpression[callee.property.name='transactional']",
  message: 'Open a transaction with inTransaction, withTransaction or inSavepoint (src/db/engine/index.ts).',
};
/** One way to send SQL: the engine's front door, by purpose (docs/architecture.md "Sending SQL"); `em.execute` and the like only inside it. */
const noRawExecute = {
  selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='execute']",
  message: 'Send SQL through src/db/engine/index.ts: the call for each purpose is in docs/architecture.md "Sending SQL".',
};

/** Another module is used through its front door (index.ts); Pothos types may reference each other, and presenters may nest. */
const moduleZones = modules.flatMap((m) => {
  const others = `src/modules/!(${m})/**`;
  const service = '**/src/modules/*/index.ts';
  const message = `Use another module through its index.ts (docs/architecture.md "Module boundaries").`;
  return [
    { target: `src/modules/${m}/!(*.graphql|*.presenter).ts`, from: others, except: [service], message },
    { target: `src/modules/${m}/*.graphql.ts`, from: others, except: [service, '**/src/modules/*/*.graphql.ts'], message },
    { target: `src/modules/${m}/*.presenter.ts`, from: others, except: [service, '**/src/modules/*/*.presenter.ts'], message },
  ];
});

export default defineConfig(
  { ignores: ['node_modules/', '.data/', 'coverage/', 'test/graphql/generated.ts', 'packages/sdk/src/gql/', 'packages/*/dist/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver()],
      // import-x parses imported files itself (for no-cycle): it must know .ts files and their parser.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      // `_`-prefixed names are deliberately unused (callback positions, destructuring leftovers).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Type-only imports stay `import type`, so erasing them (verbatimModuleSyntax) never changes what loads.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A module imported twice hides which names come from where.
      'import-x/no-duplicates': 'error',
      // Every relative import resolves to a file that exists.
      'import-x/no-unresolved': 'error',
      // A module adds its event types to the events module's EventPayloads as `interface EventPayloads extends ItsEvents {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // Namespaces only to augment a library's declared ones (e.g. `declare global { namespace Grafast … }`).
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
    },
  },
  {
    // The SDK's example imports the package by name, as a partner does; its exports' source condition
    // (packages/sdk/package.json) resolves to src/ without a build, as packages/sdk/tsconfig.json does.
    files: ['packages/**/*.ts'],
    settings: {
      'import-x/resolver-next': [createNodeResolver({ conditionNames: ['@reseller-gateway/source', 'types', 'import', 'default'] })],
    },
  },
  {
    // The example frontend (examples/, docs/partner-guide.md "The example frontend") runs in a browser.
    files: ['examples/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'history',
          'fetch',
          'crypto',
          'CSS',
          'URL',
          'URLSearchParams',
          'FormData',
          'AbortController',
        ].map((name) => [name, 'readonly']),
      ),
    },
    // Its `./sdk/…` imports are the SDK as the gateway serves it (src/examples/examples.ts), not files beside it.
    rules: { 'import-x/no-unresolved': ['error', { ignore: ['^\\./sdk/'] }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    // Response bodies are read as `any` on purpose: the assertions, not the types, check them.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The data engine (src/db/engine/README.md) is the one place that reaches into pg, Kysely and
    // MikroORM's connection layer; everything else uses it through its front door, index.ts.
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    ignores: ['src/db/engine/**', 'test/engine/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'kysely', message: 'Kysely is reached only from src/db/engine.' },
            ...['@mikro-orm/postgresql', '@mikro-orm/sql', '@mikro-orm/core'].map((name) => ({
              name,
              importNames: [
                'PostgreSqlConnection',
                'PostgreSqlDriver',
                'AbstractSqlConnection',
                'AbstractSqlDriver',
                'Connection',
                'DatabaseDriver',
              ],
              message: "MikroORM's connection layer is reached only from src/db/engine.",
            })),
          ],
          patterns: [
            {
              group: ['pg/*', 'pg-protocol', 'pg-protocol/*', 'pg-pool/*'],
              message: "pg's internals are reached only from src/db/engine.",
            },
            // Any path into the folder but its index, relative from src/db (`./engine/x.ts`) too.
            { regex: '(^|/)engine/(?!index\\.ts$)', message: 'Use the data engine through src/db/engine/index.ts.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/db/engine/**'],
    rules: { 'no-restricted-syntax': ['error', noBareTransactional] },
  },
  {
    // A later setting of a rule replaces an earlier one, so this one repeats noBareTransactional.
    // Migrations are MikroORM's own, run by its migrator: their SQL is theirs.
    files: ['src/**/*.ts'],
    ignores: ['src/db/engine/**', 'src/db/migrations/**'],
    rules: { 'no-restricted-syntax': ['error', noBareTransactional, noRawExecute] },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // A runtime import cycle makes load order decide what is undefined (type-only imports are ignored).
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            // Entities, services, the platform and the database layer never reach up into a surface.
            {
              target: ['src/platform/**', 'src/db/**', 'src/modules/*/!(*.graphql|*.rest|*.presenter).ts'],
              from: surfaces,
              message: 'Entities, services and src/platform never import a surface (README "Module boundaries").',
            },
            // Code outside the modules uses a module through its index.ts, or wires in its entities, routes, GraphQL types, page and presenters.
            {
              target: ['src/cli/**', 'src/db/**', 'src/rest/**', 'src/graphql/**', 'src/examples/**', 'src/server.ts', 'src/main.ts'],
              from: 'src/modules/**',
              except: [
                '**/src/modules/*/index.ts',
                '**/src/modules/*/*.entity.ts',
                '**/src/modules/*/*.rest.ts',
                '**/src/modules/*/*.graphql.ts',
                '**/src/modules/*/*.page.ts',
                '**/src/modules/*/*.presenter.ts',
              ],
              message: 'Use a module through its index.ts (docs/architecture.md "Module boundaries").',
            },
            // GraphQL types and REST presenters are two views of one use-case result: neither reads the other.
            {
              target: 'src/modules/*/*.graphql.ts',
              from: 'src/modules/*/*.presenter.ts',
              message: 'GraphQL types read the use case’s result, never a REST presenter (docs/architecture.md "Module boundaries").',
            },
            // The platform sits below every module.
            { target: 'src/platform/**', from: 'src/modules/**', message: 'src/platform never imports a module.' },
            ...moduleZones,
          ],
        },
      ],
    },
  },
);
