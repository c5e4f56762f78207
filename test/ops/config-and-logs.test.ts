import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../src/config.ts';
import { useApp } from '../support/app.ts';
import { killStartedProcesses, repoRoot, Service } from './processes.ts';

const app = useApp();

// The operator guide's settings table is the configuration schema, and logs are JSON lines unless a
// person is reading them.

afterAll(async () => {
  await killStartedProcesses();
});

function readmeSettings(): Map<string, string> {
  const readme = fs.readFileSync(path.join(repoRoot, 'docs', 'operator-guide.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (`[^`]*`|unset) \|/gm)];
  return new Map(rows.map((m) => [m[1], m[2] === 'unset' ? 'unset' : m[2].slice(1, -1)]));
}

describe('README › Configuration', () => {
  it('documents every setting of src/config.ts, and nothing else', () => {
    expect([...readmeSettings().keys()].sort()).toEqual(Object.keys(configSchema.shape).sort());
  });

  it('gives each setting the default the code applies', () => {
    const defaults = loadConfig({}) as unknown as Record<string, unknown>;
    for (const [name, documented] of readmeSettings()) {
      const actual = defaults[name];
      expect(actual === undefined ? 'unset' : String(actual), name).toBe(documented);
    }
  });
});

describe('logs', () => {
  it('are one JSON object per line when stdout is not a terminal, and readable lines with LOG_FORMAT=pretty', async () => {
    const json = new Service(['worker'], { DATABASE_URL: app.databaseUrl });
    await json.waitForStdout(/worker started/);
    json.child.kill('SIGTERM');
    const exit = await json.exited;
    const lines = json.stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(
      json.logLines().map((l) => l.msg),
      `exit ${JSON.stringify(exit)}; stderr:\n${json.stderr}`,
    ).toEqual(['worker started', 'shutting down', 'stopped']);
    expect(exit).toEqual({ code: 0, signal: null });

    const pretty = new Service(['worker'], { DATABASE_URL: app.databaseUrl, LOG_FORMAT: 'pretty' });
    await pretty.waitForStdout(/worker started/);
    pretty.child.kill('SIGTERM');
    await pretty.exited;
    expect(pretty.stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: worker started$/m);
    expect(pretty.stdout).toMatch(/^ {4}database: "DATABASE_URL"$/m);
    expect(pretty.stdout.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
  }, 60_000);
});
