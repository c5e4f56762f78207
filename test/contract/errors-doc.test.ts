import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toGraphQLError } from '../../src/graphql/errors.ts';
import { catalogue, DomainError, errorBody, type ErrorCode } from '../../src/platform/errors.ts';

// docs/errors.md is the catalogue for integrators: every code, with the status and type the
// code answers with, and the GraphQL union member a mutation answers it as.
const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const codes = Object.keys(catalogue) as ErrorCode[];

function section(title: string): string {
  const start = doc.indexOf(`## ${title}\n`);
  expect(start, `docs/errors.md has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

describe('docs/errors.md', () => {
  const rows = [...section('The catalogue').matchAll(/^\| `(\w+)` \| (\d+) \| (\w+) \| (.+) \|$/gm)]
    .map(([, code, status, type, meaning]) => ({ code, status: Number(status), type, meaning }));

  it('lists every catalogue code once, with its HTTP status and type', () => {
    for (const code of codes) {
      const documented = rows.filter((r) => r.code === code);
      expect(documented, `docs/errors.md: the catalogue code ${code} is missing (or listed twice)`).toHaveLength(1);
      expect({ status: documented[0].status, type: documented[0].type }, `docs/errors.md: ${code}`)
        .toEqual({ status: catalogue[code].status, type: catalogue[code].type });
    }
  });

  it('lists no code the catalogue does not have', () => {
    for (const row of rows) expect(codes, `docs/errors.md lists ${row.code}, which is not in the catalogue`).toContain(row.code);
  });

  it('shows the REST envelope with the fields the edge writes', () => {
    const example = /```json\n([\s\S]+?)\n```/.exec(section('REST V3: the envelope'))?.[1];
    const shown = JSON.parse(example ?? '{}') as { error?: Record<string, unknown> };
    const written = errorBody(new DomainError('validation_error', 'bad', { param: 'email' }), 'req_1').error;
    expect(Object.keys(shown.error ?? {}).sort()).toEqual(Object.keys(written).sort());
  });

  it('maps each code to the GraphQL union member a mutation answers with', () => {
    const members = [...section('GraphQL').matchAll(/^\| `(\w+Error)` \| (.+) \| (\d+) \|$/gm)];
    expect(members.map((m) => m[1]).sort()).toEqual(
      ['ConflictError', 'IdempotencyError', 'InputError', 'NotFoundError', 'PermissionError', 'UnprocessableError']);
    for (const [, member, cell, status] of members) {
      const named = [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]).filter((c): c is ErrorCode => c in catalogue);
      expect(named.length, `${member} names catalogue codes`).toBeGreaterThan(0);
      for (const code of named) {
        expect(toGraphQLError(new DomainError(code)).constructor.name, `docs/errors.md maps ${code} to ${member}`).toBe(member);
        expect(catalogue[code].status, `${code} under ${member}`).toBe(Number(status));
      }
    }
  });
});
