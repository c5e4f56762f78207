import { Migration20261122000000_foundation } from './Migration20261122000000_foundation.ts';
import { Migration20261122010000_catalogue } from './Migration20261122010000_catalogue.ts';
import { Migration20261124000000_bookings } from './Migration20261124000000_bookings.ts';

// Listed explicitly (no directory glob): the order here is the order they run.
export const migrationsList = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_catalogue', class: Migration20261122010000_catalogue },
  { name: 'Migration20261124000000_bookings', class: Migration20261124000000_bookings },
];
