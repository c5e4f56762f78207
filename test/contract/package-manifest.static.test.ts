import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

// package.json carries no dead weight, and what it cannot explain itself (it has no comments) the
// operator guide (docs/operator-guide.md) does: every override has its reason under "Why the overrides".

const read = (file: string) => fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  overrides?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
  bin: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };

/** The operator guide's section under `heading`, up to the next heading of any level. */
function section(heading: string): string {
  const readme = read('docs/operator-guide.md');
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `README has no "${heading}"`).toBeGreaterThan(-1);
  const rest = readme.slice(start + heading.length + 2);
  return rest.slice(0, rest.search(/\n#{1,6} /) === -1 ? undefined : rest.search(/\n#{1,6} /));
}

describe('package.json', () => {
  it('every override is explained in the README, by name and pinned version', () => {
    const why = section('### Why the overrides');
    for (const [name, version] of Object.entries(manifest.overrides ?? {})) {
      expect(why, name).toContain(`\`${name}\``);
      expect(why, name).toContain(version);
    }
  });

  it('allowScripts names only installable packages that have an install script', () => {
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([, p]) => p.hasInstallScript)
        .map(([path]) => path.replace(/^.*node_modules\//, '')),
    );
    for (const name of Object.keys(manifest.allowScripts ?? {})) expect(withScripts.has(name), name).toBe(true);
  });

  it('every Pothos plugin it depends on is registered by the schema builder', () => {
    const builder = read('src/graphql/builder.ts');
    const plugins = Object.keys(manifest.dependencies).filter((name) => name.startsWith('@pothos/plugin-'));
    expect(plugins.length).toBeGreaterThan(0);
    for (const name of plugins) {
      const imported = new RegExp(`import (\\w+) from '${name}';`).exec(builder);
      expect(imported, `${name} is not imported by src/graphql/builder.ts`).not.toBeNull();
      expect(builder, `${name} is imported but not in plugins: [...]`).toMatch(new RegExp(`plugins: \\[[^\\]]*\\b${imported![1]}\\b`));
    }
  });

  it('the command is the plain-JavaScript launcher, which checks the Node version first', () => {
    expect(manifest.bin).toEqual({ 'reseller-gateway': 'src/cli/launcher.mjs' });
  });
});
