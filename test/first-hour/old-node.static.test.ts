import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../ops/processes.ts';

// `reseller-gateway` (src/cli/launcher.mjs) on a Node older than 22.17 says what to run
// instead, in one line, where `node src/main.ts` would stop at ERR_UNKNOWN_FILE_EXTENSION.
// The old Node is the pinned one told it is 20.20.2 before the launcher runs.

const pinnedNode = path.join(repoRoot, 'node_modules', '.bin', 'node');

function launch(args: string[], pretendVersion?: string) {
  const pretend = pretendVersion
    ? ['--import', `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${pretendVersion}"})`]
    : [];
  return spawnSync(pinnedNode, [...pretend, 'src/cli/launcher.mjs', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
}

describe('src/cli/launcher.mjs', () => {
  it.each(['20.20.2', '22.16.0', '18.19.1'])(
    'on Node %s prints one line naming the commands that bring their own Node, and exits 1',
    (version) => {
      const run = launch(['serve'], version);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`needs Node >= 22.17 (this is ${version})`);
      for (const command of ['npx reseller-gateway', 'npm start', 'node_modules/.bin/node src/main.ts'])
        expect(lines[0]).toContain(command);
    },
  );

  it('on the pinned Node runs the CLI', () => {
    const help = launch(['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: reseller-gateway <command>/);
    // A usage error still answers at once with exit code 2, through the launcher.
    expect(launch(['resellers', 'bogus']).status).toBe(2);
  });
});
