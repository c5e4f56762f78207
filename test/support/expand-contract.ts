// The expand/contract rule for migrations (docs/architecture.md "Migrations"): a migration after
// the baseline that drops, renames or narrows what the previous release uses must declare itself a
// contract step (src/db/migrations/contract.ts). Checked on the SQL each migration's up() adds.

/**
 * The migrations written before the rule, by name: they ran on every database before any rolling
 * release, and several of them drop or change what an earlier one made. Nothing is added here:
 * a new migration follows the rule.
 */
export const GRANDFATHERED = [
  'Migration20261122000000_foundation',
  'Migration20261122010000_catalogue',
  'Migration20261124000000_bookings',
  'Migration20261124090000_secrets',
  'Migration20261124100000_credits',
  'Migration20261124110000_access_codes',
  'Migration20261124120000_lookups',
  'Migration20261124130000_webhooks',
  'Migration20261124140000_hosted_sessions',
  'Migration20261125000000_business_account',
  'Migration20261127000000_provider_tiers',
  'Migration20261127010000_settled_at_commit',
  'Migration20261127020000_wallet_by_ledger',
  'Migration20261127030000_key_held_at_commit',
  'Migration20261127040000_issued_pass_by_client',
  'Migration20261127050000_pass_expiry_index',
  'Migration20261128000000_paid_through',
  'Migration20261128010000_rate_limits',
  'Migration20261128020000_fair_webhook_delivery',
];

/** The SQL a migration class's up() adds (every migration here only calls addSql). */
export function upStatements(cls: { prototype: { up(): unknown } }): string[] {
  const added: string[] = [];
  cls.prototype.up.call({ addSql: (sql: string) => added.push(sql) });
  return added;
}

/** Comments and string literals out, one space for any run of white space, lower case. */
function normalised(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** `a, b(c, d), e` → ['a', 'b(c, d)', 'e']: an ALTER TABLE's actions, commas inside parentheses kept. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/** Statements the previous release may not survive, whole: what each does, by a pattern. */
const DESTRUCTIVE_STATEMENTS: [RegExp, string][] = [
  [/\bdrop (table|view|materialized view|sequence|type|function|trigger|schema)\b/, 'drops a $1'],
  [/\bdrop index\b/, 'drops an index'],
  [/\brename\b/, 'renames'],
  [/^truncate\b/, 'empties a table'],
];

/** The actions of an ALTER TABLE the previous release may not survive (COLUMN is optional in each). */
const DESTRUCTIVE_ACTIONS: [RegExp, string][] = [
  [/^drop constraint\b/, 'drops a constraint'],
  [/^drop (?!constraint\b)/, 'drops a column'],
  [/^alter (column )?[\w"]+ (set data )?type\b/, "changes a column's type"],
  [/^alter (column )?[\w"]+ set not null\b/, 'sets NOT NULL on an existing column'],
  [/^alter (column )?[\w"]+ drop default\b/, 'drops a default the previous release may rely on'],
  // A new NOT NULL column without a default: the previous release's inserts leave it out and fail.
  [/^add (column )?(?!constraint\b)(?!.*\b(default|generated)\b).*\bnot null\b/, 'adds a NOT NULL column without a default'],
];

/** Every destructive statement in `sql`, described: empty when it only expands the schema. */
export function destructiveStatements(sql: string): string[] {
  const found: string[] = [];
  for (const statement of normalised(sql)
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    for (const [pattern, what] of DESTRUCTIVE_STATEMENTS) {
      const match = pattern.exec(statement);
      if (match) found.push(`${what.replace('$1', match[1] ?? '')}: ${statement}`);
    }
    const alter = /^alter table (?:if exists )?(?:only )?[\w".]+ (.*)$/.exec(statement);
    for (const action of alter ? topLevelParts(alter[1]) : [])
      for (const [pattern, what] of DESTRUCTIVE_ACTIONS) if (pattern.test(action)) found.push(`${what}: ${statement}`);
  }
  return found;
}

/**
 * What is wrong with one migration under the rule: a destructive statement in a migration that
 * does not declare itself a contract step, or a contract step that does not say what it removes
 * (each named in its SQL) and since when nothing uses it.
 */
export function expandContractProblems(migration: { name: string; sql: string[]; contract?: unknown }): string[] {
  if (GRANDFATHERED.includes(migration.name)) return [];
  const sql = migration.sql.join(';\n');
  const destructive = destructiveStatements(sql);
  if (migration.contract === undefined)
    return destructive.map((d) => `${migration.name} ${d} (an expand migration; declare a contract step to remove)`);
  const { removes, unusedSince } = migration.contract as { removes?: unknown; unusedSince?: unknown };
  const problems: string[] = [];
  if (!Array.isArray(removes) || removes.length === 0 || !removes.every((r) => typeof r === 'string' && r.length > 0))
    problems.push(`${migration.name}: contract.removes must name what the step removes`);
  else
    for (const r of removes as string[])
      if (!r.split('.').every((part) => normalised(sql).includes(part.toLowerCase())))
        problems.push(`${migration.name}: contract.removes names ${r}, which its SQL does not touch`);
  if (typeof unusedSince !== 'string' || unusedSince.length === 0)
    problems.push(`${migration.name}: contract.unusedSince must name the migration or release since which nothing uses what it removes`);
  if (destructive.length === 0) problems.push(`${migration.name}: declares a contract step but removes nothing`);
  return problems;
}
