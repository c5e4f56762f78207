import { Migration20261122000000_foundation } from './Migration20261122000000_foundation.ts';
import { Migration20261122010000_catalogue } from './Migration20261122010000_catalogue.ts';

// Listed explicitly (no directory glob): the order here is the order they run.
export const migrationsList = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_catalogue', class: Migration20261122010000_catalogue },
];
