import pg from 'pg';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

export type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; Plans?: PlanNode[] };

/**
 * The scans in the plan of the statement among `statements` (as a request or a job sent them) that
 * `pattern` finds, run with `args` for its `$n` (or `?`), on a connection of its own: the generic plan, the
 * one every execution of a prepared statement reuses. With `indexesOnly`, sequential scans are
 * priced out, so the plan shows whether an index can serve the statement at all (on a test's few
 * rows a sequential scan is cheaper than any index).
 */
export async function planScans(
  app: TestApp,
  statements: readonly string[],
  pattern: RegExp,
  args: string[],
  { indexesOnly = false } = {},
): Promise<PlanNode[]> {
  const statement = statements.find((q) => pattern.test(q));
  expect(statement, statements.join('\n')).toBeDefined();
  const db = new pg.Client({ connectionString: app.databaseUrl });
  await db.connect();
  try {
    await db.query('set plan_cache_mode = force_generic_plan');
    if (indexesOnly) await db.query('set enable_seqscan = off');
    // MikroORM's own statements are logged with `?` placeholders, prepared ones with `$n`.
    let n = 0;
    await db.query(`prepare planned as ${statement!.replace(/\?/g, () => `$${++n}`)}`);
    const execute = args.length ? `execute planned(${args.map((a) => db.escapeLiteral(a)).join(', ')})` : 'execute planned';
    const [
      {
        'QUERY PLAN': [plan],
      },
    ] = (await db.query(`explain (format json) ${execute}`)).rows;
    const scans: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      if (/Scan/.test(node['Node Type'])) scans.push(node);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.Plan);
    return scans;
  } finally {
    await db.end();
  }
}
