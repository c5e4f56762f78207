import { z } from 'zod';
import type { Reseller } from './resellers.service.ts';

// V3 presenters: allow-lists from rows to the wire; an issuer shows its id and name, nothing else.

export const issuerSchema = z
  .object({
    object: z.literal('issuer').describe('Always `issuer`'),
    id: z.string().describe('Reseller id: the `issuer_id` of POST /lookups'),
    name: z.string().describe('Name of the reseller'),
  })
  .meta({ id: 'Issuer', description: 'A reseller whose clients can be looked up (it has lookup enabled)' });
export type IssuerResource = z.infer<typeof issuerSchema>;

export function presentIssuer(reseller: Reseller): IssuerResource {
  return { object: 'issuer', id: reseller.id, name: reseller.name };
}
