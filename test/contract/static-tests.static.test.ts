import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// CI runs `*.static.test.ts` once, not on each database and engine (test/vitest.config.ts, .ci/run).
// That is only sound while such a file reaches neither: no app, no connection, no database of the
// run, no `serve` or CLI process (which would open one).
const testDir = new URL('../', import.meta.url);
const staticFiles = (readdirSync(testDir, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.static.test.ts') && !f.endsWith('static-tests.static.test.ts')) // this file names what it looks for
  .sort();

const reachesTheDatabase: [RegExp, string][] = [
  // Imports at the start of a line: a lint check may hold such an import in a string as its fixture.
  [
    /^import[^;]* from '[./]*support\/(app|migrations|global-setup|db-state|factories)\.ts';$/m,
    'a test support module that opens the database',
  ],
  [/^import[^;]* from '(pg|kysely|@mikro-orm\/[\w-]+)';$/m, 'a database client'],
  [/\binject\(/, "the run's database (inject)"],
  [/\b(useApp|startApp|useAppWithLog|onDatabaseMigratedTo)\b/, 'the app or a migrated database'],
  [/\b(Service|runCli)\b/, 'a serve or CLI process'],
];

describe('*.static.test.ts', () => {
  it('exist (the convention is in use)', () => {
    expect(staticFiles.length).toBeGreaterThan(10);
  });

  it.each(staticFiles)('%s reaches neither the database nor the engine', (file) => {
    const source = readFileSync(new URL(file, testDir), 'utf8');
    for (const [pattern, what] of reachesTheDatabase) expect(source, `${file} uses ${what}: name it *.test.ts`).not.toMatch(pattern);
  });
});
