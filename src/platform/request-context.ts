import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { newId } from './ids.ts';

/** Who is calling. Later issues add the lookup client and client-session callers. */
export interface ResellerCaller { kind: 'reseller'; resellerId: string; apiKeyId: string; currency: string }
export type Caller = ResellerCaller | { kind: 'anonymous' };

/**
 * Everything a use case needs: the entity manager (a transaction when the edge opened one),
 * the caller, the clock, config and a request-scoped logger. No HTTP or GraphQL types.
 */
export interface Ctx {
  em: EntityManager;
  caller: Caller;
  clock: Clock;
  config: Config;
  log: Logger;
  requestId: string;
  idempotencyKey?: string;
}

export const newRequestId = (): string => newId('request');

/** The reseller the caller acts for; services call this so an anonymous caller can never slip through. */
export function resellerOf(ctx: Pick<Ctx, 'caller'>): ResellerCaller {
  if (ctx.caller.kind !== 'reseller') throw new Error('a reseller caller is required here');
  return ctx.caller;
}

export function withEm(ctx: Ctx, em: EntityManager): Ctx {
  return { ...ctx, em };
}
