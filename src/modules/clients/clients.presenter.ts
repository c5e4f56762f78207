import { unixSeconds } from '../../platform/clock.ts';
import { effectiveStatus } from '../passes/passes.service.ts';
import type { ClientView } from './clients.service.ts';

export function presentClient(view: ClientView, now: Date) {
  const { client, current } = view;
  return {
    object: 'client' as const,
    id: client.id,
    first_name: client.firstName,
    last_name: client.lastName,
    email: client.email,
    phone: client.phone,
    external_id: client.externalId,
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
