// The catalog module's front door: the operator's catalogue import (docs/catalog-format.md) and
// the record types the demo catalogue is written in (docs/architecture.md "Module boundaries").
export { importCatalog, IMPORT_BATCH_SIZE, type ImportCounts, type ImportProgress, type ImportStage } from './catalog.import.ts';
export { progressReporter } from './catalog.progress.ts';
export { CatalogRejected, MAX_REPORTED_PROBLEMS, type CatalogProblem } from './catalog.validate.ts';
export type { Catalog, CatalogInput, ClassRecord, CopayOptionRecord, ProviderRecord, SpaServiceRecord } from './catalog.schema.ts';
