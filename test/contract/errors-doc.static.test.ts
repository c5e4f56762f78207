import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.ts';
import { queryLimits } from '../../src/graphql/builder.ts';
import { toGraphQLError } from '../../src/graphql/errors.ts';
import { MAX_ALIASES, MAX_DIRECTIVES, MAX_TOKENS } from '../../src/graphql/limits.ts';
import { catalogue, DomainError, errorBody, type ErrorCode } from '../../src/platform/errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../src/platform/pagination.ts';
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENTS_PER_REQUEST } from '../../src/modules/trusted-documents/index.ts';

// docs/errors.md is the catalogue for integrators: every code, with the status and type the
// code answers with, the GraphQL union member a mutation answers it as, and the limits, each
// read from the page and compared with the constant or configuration default it documents.
const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const srcDir = new URL('../../src/', import.meta.url);
const codes = Object.keys(catalogue) as ErrorCode[];

function section(title: string): string {
  const start = doc.indexOf(`## ${title}\n`);
  expect(start, `docs/errors.md has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

describe('docs/errors.md', () => {
  const rows = [...section('The catalogue').matchAll(/^\| `(\w+)` \| (\d+) \| (\w+) \| (.+) \|$/gm)].map(
    ([, code, status, type, meaning]) => ({ code, status: Number(status), type, meaning }),
  );

  it('lists every catalogue code once, with its HTTP status and type', () => {
    for (const code of codes) {
      const documented = rows.filter((r) => r.code === code);
      expect(documented, `docs/errors.md: the catalogue code ${code} is missing (or listed twice)`).toHaveLength(1);
      expect({ status: documented[0].status, type: documented[0].type }, `docs/errors.md: ${code}`).toEqual({
        status: catalogue[code].status,
        type: catalogue[code].type,
      });
    }
  });

  it('lists no code the catalogue does not have', () => {
    for (const row of rows) expect(codes, `docs/errors.md lists ${row.code}, which is not in the catalogue`).toContain(row.code);
  });

  it('marks reserved exactly the codes no source file names outside the catalogue', () => {
    const sources = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && f !== 'platform/errors.ts')
      .map((f) => readFileSync(new URL(f, srcDir), 'utf8'))
      .join('\n');
    for (const { code, meaning } of rows) {
      const named = new RegExp(`['"\`]${code}['"\`]`).test(sources);
      const reserved = meaning.startsWith('*Reserved: not raised yet.*');
      expect(
        reserved,
        named
          ? `docs/errors.md marks ${code} reserved, but src raises it: drop the mark`
          : `src never raises ${code}: mark it "*Reserved: not raised yet.*" in docs/errors.md`,
      ).toBe(!named);
    }
  });

  it('shows the REST envelope with the fields the edge writes', () => {
    const example = /```json\n([\s\S]+?)\n```/.exec(section('REST V3: the envelope'))?.[1];
    const shown = JSON.parse(example ?? '{}') as { error?: Record<string, unknown> };
    const written = errorBody(new DomainError('validation_error', 'bad', { param: 'email' }), 'req_1').error;
    expect(Object.keys(shown.error ?? {}).sort()).toEqual(Object.keys(written).sort());
  });

  it('maps each code to the GraphQL union member a mutation answers with', () => {
    const members = [...section('GraphQL').matchAll(/^\| `(\w+Error)` \| (.+) \| (\d+) \|$/gm)];
    expect(members.map((m) => m[1]).sort()).toEqual([
      'ConflictError',
      'IdempotencyError',
      'InputError',
      'NotFoundError',
      'PermissionError',
      'UnprocessableError',
    ]);
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

describe('docs/errors.md: the Limits table', () => {
  const config = configWith({});
  // Durations compare in milliseconds, sizes in bytes.
  const inCode: Record<string, number> = {
    'GraphQL cost': queryLimits.complexity,
    'GraphQL depth': queryLimits.depth,
    'GraphQL breadth': queryLimits.breadth,
    'GraphQL aliases': MAX_ALIASES,
    'GraphQL directives': MAX_DIRECTIVES,
    'GraphQL tokens': MAX_TOKENS,
    'Page size': MAX_LIMIT,
    'Default page size': DEFAULT_LIMIT,
    'Request body': config.BODY_LIMIT_BYTES,
    'Idempotency-Key retention': config.IDEMPOTENCY_TTL_SECONDS * 1000,
    'Idempotency-Key wait': config.IDEMPOTENCY_WAIT_MS,
    'Trusted document': MAX_DOCUMENT_BYTES,
    'Trusted documents a request': MAX_DOCUMENTS_PER_REQUEST,
  };
  const units: Record<string, number> = { '': 1, KiB: 1024, MiB: 1024 * 1024, ms: 1, s: 1000 };
  const documented = new Map(
    [...section('Limits').matchAll(/^\| ([^|]+?) \| ([^|]+?) \| .+ \|$/gm)]
      .map(([, name, value]) => [name, value] as const)
      .filter(([name]) => name !== 'limit'),
  );

  /** "25,000" → 25000, "1 MiB" → 1048576, "90 s" → 90000; NaN for anything else. */
  function quantity(text: string): number {
    const m = /^(\d[\d,]*)(?: (\w+))?$/.exec(text);
    const unit = units[m?.[2] ?? ''];
    return m && unit ? Number(m[1].replaceAll(',', '')) * unit : NaN;
  }

  it('lists each limit once', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(inCode).sort());
  });

  it('states the values the code enforces', () => {
    for (const [name, value] of documented) {
      expect(quantity(value), `docs/errors.md, Limits: ${name} is "${value}"`).toBe(inCode[name]);
    }
  });

  it('names the limits a refused GraphQL operation reports in extensions.limit', () => {
    const graphql = section('GraphQL');
    for (const limit of Object.keys(queryLimits)) expect(graphql, `extensions.limit ${limit}`).toContain(`\`${limit}\``);
  });
});
