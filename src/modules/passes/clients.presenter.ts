import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { maskEmail, maskPhone } from '../clients/index.ts';
import { issuedPassStatuses, paymentModels } from './passes.entity.ts';
import { effectiveStatus } from './passes.service.ts';
import type { ClientView } from './get-client.ts';

// V3 presenter: an allow-list from rows to the wire; its return type is z.infer of the schema
// the OpenAPI document publishes (docs/openapi.json). The `client` shows its current pass, so it is
// presented by the passes module, which builds on clients (get-client.ts).

const activePassSchema = z
  .object({
    id: z.string().describe('Issued pass id'),
    pass_id: z.string().describe('Id of the pass package'),
    pass_name: z.string().describe('Name of the pass package'),
    status: z.enum(issuedPassStatuses).describe('ACTIVE, EXPIRED (past `expires_at`) or CANCELLED'),
    payment_model: z.enum(paymentModels).describe('PAYG or PREPAID'),
    expires_at: z.int().min(0).describe('Expiry time, Unix seconds'),
  })
  .meta({ id: 'ClientActivePass', description: "The client's current issued pass, in short" });

export const clientSchema = z
  .object({
    object: z.literal('client').describe('Always `client`'),
    id: z.string().describe('Client id'),
    first_name: z.string().describe('First name'),
    last_name: z.string().describe('Last name'),
    email: z.string().describe("E-mail address; masked (`a***@example.com`) for another reseller's client read through a lookup"),
    phone: z.string().nullable().describe("Phone number; null when not given; only its last two digits for another reseller's client"),
    external_id: z
      .string()
      .nullable()
      .describe("The reseller's own id for the client; null when not given, and for another reseller's client"),
    credit_balance: z.int().describe('Credits in the client wallet'),
    active_pass: activePassSchema.nullable().describe("The client's current issued pass; null when it has none"),
    created: z.int().min(0).describe('Creation time, Unix seconds'),
  })
  .meta({ id: 'Client', description: 'A client of the reseller' });
export type ClientResource = z.infer<typeof clientSchema>;

/** Another reseller's client (read through a lookup, docs/partner-guide.md "Lookup") shows masked contact details and no external id. */
export function presentClient(view: ClientView, now: Date): ClientResource {
  const { client, current, foreign } = view;
  return {
    object: 'client',
    id: client.id,
    first_name: client.firstName,
    last_name: client.lastName,
    email: foreign ? maskEmail(client.email) : client.email,
    phone: client.phone == null ? null : foreign ? maskPhone(client.phone) : client.phone,
    external_id: foreign ? null : (client.externalId ?? null),
    credit_balance: client.creditBalance,
    active_pass: current
      ? {
          id: current.issuedPass.id,
          pass_id: current.pass.id,
          pass_name: current.pass.name,
          status: effectiveStatus(current.issuedPass, now),
          payment_model: current.issuedPass.paymentModel,
          expires_at: unixSeconds(current.issuedPass.expiresAt),
        }
      : null,
    created: unixSeconds(client.createdAt),
  };
}
