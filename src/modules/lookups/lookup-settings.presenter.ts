import { z } from 'zod';
import type { Reseller } from '../resellers/index.ts';

// V3 presenter of a reseller's lookup setting (docs/partner-guide.md "Lookup"): the flag is stored on
// the reseller, but the setting is the lookups module's, since turning it off revokes lookups.

export const lookupSettingsSchema = z
  .object({
    object: z.literal('lookup_settings').describe('Always `lookup_settings`'),
    lookup_enabled: z.boolean().describe("true: other resellers may look up this reseller's clients (it is listed in GET /issuers)"),
  })
  .meta({ id: 'LookupSettings', description: "The reseller's lookup setting" });
export type LookupSettingsResource = z.infer<typeof lookupSettingsSchema>;

export function presentLookupSettings(reseller: Reseller): LookupSettingsResource {
  return { object: 'lookup_settings', lookup_enabled: reseller.lookupEnabled };
}
