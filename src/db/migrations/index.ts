import { Migration20261122000000_foundation } from './Migration20261122000000_foundation.ts';
import { Migration20261122010000_catalogue } from './Migration20261122010000_catalogue.ts';
import { Migration20261124000000_bookings } from './Migration20261124000000_bookings.ts';
import { Migration20261124090000_secrets } from './Migration20261124090000_secrets.ts';
import { Migration20261124100000_credits } from './Migration20261124100000_credits.ts';
import { Migration20261124110000_access_codes } from './Migration20261124110000_access_codes.ts';
import { Migration20261124130000_webhooks } from './Migration20261124130000_webhooks.ts';
import { Migration20261124120000_lookups } from './Migration20261124120000_lookups.ts';
import { Migration20261124140000_hosted_sessions } from './Migration20261124140000_hosted_sessions.ts';
import { Migration20261125000000_business_account } from './Migration20261125000000_business_account.ts';
import { Migration20261127000000_provider_tiers } from './Migration20261127000000_provider_tiers.ts';
import { Migration20261127010000_settled_at_commit } from './Migration20261127010000_settled_at_commit.ts';
import { Migration20261127020000_wallet_by_ledger } from './Migration20261127020000_wallet_by_ledger.ts';
import { Migration20261127030000_key_held_at_commit } from './Migration20261127030000_key_held_at_commit.ts';
import { Migration20261127040000_issued_pass_by_client } from './Migration20261127040000_issued_pass_by_client.ts';
import { Migration20261127050000_pass_expiry_index } from './Migration20261127050000_pass_expiry_index.ts';
import { Migration20261128000000_paid_through } from './Migration20261128000000_paid_through.ts';
import { Migration20261128010000_rate_limits } from './Migration20261128010000_rate_limits.ts';
import { Migration20261128020000_fair_webhook_delivery } from './Migration20261128020000_fair_webhook_delivery.ts';
import { Migration20261129000000_provider_earth_point } from './Migration20261129000000_provider_earth_point.ts';
import { Migration20261130000400_live_events } from './Migration20261130000400_live_events.ts';

// Listed explicitly (no directory glob): the order here is the order they run.
export const migrationsList = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_catalogue', class: Migration20261122010000_catalogue },
  { name: 'Migration20261124000000_bookings', class: Migration20261124000000_bookings },
  { name: 'Migration20261124090000_secrets', class: Migration20261124090000_secrets },
  { name: 'Migration20261124100000_credits', class: Migration20261124100000_credits },
  { name: 'Migration20261124110000_access_codes', class: Migration20261124110000_access_codes },
  { name: 'Migration20261124130000_webhooks', class: Migration20261124130000_webhooks },
  { name: 'Migration20261124120000_lookups', class: Migration20261124120000_lookups },
  { name: 'Migration20261124140000_hosted_sessions', class: Migration20261124140000_hosted_sessions },
  { name: 'Migration20261125000000_business_account', class: Migration20261125000000_business_account },
  { name: 'Migration20261127000000_provider_tiers', class: Migration20261127000000_provider_tiers },
  { name: 'Migration20261127010000_settled_at_commit', class: Migration20261127010000_settled_at_commit },
  { name: 'Migration20261127020000_wallet_by_ledger', class: Migration20261127020000_wallet_by_ledger },
  { name: 'Migration20261127030000_key_held_at_commit', class: Migration20261127030000_key_held_at_commit },
  { name: 'Migration20261127040000_issued_pass_by_client', class: Migration20261127040000_issued_pass_by_client },
  { name: 'Migration20261127050000_pass_expiry_index', class: Migration20261127050000_pass_expiry_index },
  { name: 'Migration20261128000000_paid_through', class: Migration20261128000000_paid_through },
  { name: 'Migration20261128010000_rate_limits', class: Migration20261128010000_rate_limits },
  { name: 'Migration20261128020000_fair_webhook_delivery', class: Migration20261128020000_fair_webhook_delivery },
  { name: 'Migration20261129000000_provider_earth_point', class: Migration20261129000000_provider_earth_point },
  { name: 'Migration20261130000400_live_events', class: Migration20261130000400_live_events },
];
