import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ConfigError } from '../../config.ts';

/**
 * The exact versions the tuned engine's parts were written against and tested with (README.md in
 * this folder says which internals of each they reach). Another version may have moved those
 * internals: the engine then refuses to start rather than run on a guess. `DB_ENGINE=plain` needs
 * none of them. On an upgrade: check each part against the new version, run the suite, then
 * change the version here.
 */
export const ENGINE_WRITTEN_AGAINST: Readonly<Record<string, string>> = {
  pg: '8.23.0',
  kysely: '0.29.6',
  '@mikro-orm/core': '7.2.1',
  '@mikro-orm/sql': '7.2.1',
  '@mikro-orm/postgresql': '7.2.1',
};

/** A configuration problem: the installed dependencies do not fit the engine asked for (reported as its one line). */
export class EngineVersionError extends ConfigError {}

/** The version of `name` as this process loads it: resolved from here (or, for Kysely, from MikroORM's SQL package, which loads it). */
export function installedVersion(name: string): string | undefined {
  const here = createRequire(import.meta.url);
  const from = name === 'kysely' ? createRequire(here.resolve('@mikro-orm/sql')) : here;
  let dir = path.dirname(from.resolve(name));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

let checked = false;

/** Throws one line naming every package whose installed version is not the one the engine was written against; checks once per process. */
export function checkEngineVersions(installed: (name: string) => string | undefined = installedVersion): void {
  if (checked) return;
  const wrong = Object.entries(ENGINE_WRITTEN_AGAINST)
    .map(([name, expected]) => ({ name, expected, found: installed(name) }))
    .filter(({ expected, found }) => found !== expected);
  if (wrong.length > 0) {
    const list = wrong.map(({ name, expected, found }) => `${name} ${found ?? '(not found)'} (written against ${expected})`).join(', ');
    throw new EngineVersionError(
      `the tuned database engine does not run on ${list}: check src/db/engine/README.md "On an upgrade", or start with DB_ENGINE=plain`,
    );
  }
  checked = true;
}
