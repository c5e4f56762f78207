import { unixSeconds } from '../../platform/clock.ts';
import type { Client } from '../clients/clients.entity.ts';
import type { IssuedPass, PassPackage } from './passes.entity.ts';
import { effectiveStatus, visitsUsed } from './passes.service.ts';

// V3 presenters: allow-lists from rows to the wire; a row is never serialised as it is.

export function presentPass(pass: PassPackage, providerCount = 0) {
  return {
    object: 'pass' as const,
    id: pass.id,
    name: pass.name,
    description: pass.description,
    price: pass.price,
    currency: pass.currency,
    duration: pass.duration,
    payment_model: pass.paymentModel,
    categories: pass.categories.map((c) => ({
      type: c.type,
      tiers: [...c.tiers],
      visits_allowed: c.visits_allowed,
      credit_allocated: c.credit_allocated,
    })),
    provider_count: providerCount,
    created: unixSeconds(pass.createdAt),
  };
}

export function presentIssuedPass(r: { issuedPass: IssuedPass; pass: PassPackage; client?: Client }, now: Date) {
  const { issuedPass: ip, pass } = r;
  return {
    object: 'issued_pass' as const,
    id: ip.id,
    client_id: ip.clientId,
    pass_id: ip.passId,
    pass_name: pass.name,
    passcode: ip.passcode,
    status: effectiveStatus(ip, now),
    payment_model: ip.paymentModel,
    categories: pass.categories.map((c) => ({
      type: c.type,
      tiers: [...c.tiers],
      visits_allowed: c.visits_allowed,
      visits_used: visitsUsed(ip, c.type, now),
      credit_allocated: c.credit_allocated,
    })),
    start_date: ip.startDate,
    expires_at: unixSeconds(ip.expiresAt),
    created: unixSeconds(ip.createdAt),
  };
}

export function presentRenewal(r: { issuedPass: IssuedPass; pass: PassPackage; amount: number; previousExpiresAt: Date }, now: Date) {
  return {
    object: 'pass_renewal' as const,
    issued_pass: presentIssuedPass(r, now),
    amount: r.amount,
    currency: r.pass.currency,
    previous_expires_at: unixSeconds(r.previousExpiresAt),
    new_expires_at: unixSeconds(r.issuedPass.expiresAt),
  };
}
