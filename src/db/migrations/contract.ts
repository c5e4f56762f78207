// Migrations are expand/contract (docs/architecture.md "Migrations"): a migration that only adds
// lets the previous release run on the new schema, so instances of both can serve while a release
// rolls. One that removes or changes what the previous release uses is a contract step, run a release
// after the code stopped using it, and says so by exporting `contract`:
//
//   export const contract: ContractStep = { removes: ['reseller.legacy_name'], unusedSince: 'Migration2026…_x' };
//
// test/ops/expand-contract.static.test.ts refuses a destructive statement in a migration without it.

/** What a contract step removes or changes (each named as it appears in the SQL), and since when nothing uses it. */
export interface ContractStep {
  /** Tables, columns (`table.column`), indexes or constraints the step drops, renames or changes. */
  removes: readonly string[];
  /** The migration or release after which no code reads or writes them. */
  unusedSince: string;
}
