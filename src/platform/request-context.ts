import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { newId } from './ids.ts';
import type { CatalogueCache } from './catalogue-cache.ts';

/**
 * What a Service-Lookup-Token adds to its reseller's caller (docs/partner-guide.md "Lookup"): the one client the
 * request may act for, a client of `clientResellerId` (the issuer), and the issued pass the lookup
 * was verified against. Services resolve clients through clients.service.ts and passes.service.ts,
 * which honour it; the routes and GraphQL fields that take a token are the only ones it reaches.
 */
export interface LookupScope {
  lookupId: string;
  clientId: string;
  clientResellerId: string;
  issuedPassId: string;
}

/** The scopes of a client-session token (docs/partner-guide.md "Client sessions"); `read` is always held. */
export type ClientSessionScopeName = 'read' | 'book' | 'access_code';
/** What a client-session token (`Authorization: Bearer cs_…`, /graphql only) adds to its reseller's caller: the one client it acts for. */
export interface ClientSessionScope {
  sessionId: string;
  clientId: string;
  scopes: readonly ClientSessionScopeName[];
}

/**
 * Who is calling. A reseller acts with its API key (`apiKeyId`), or with a lookup token
 * (`lookup`), or both (they must name the same reseller), or with a client-session token
 * (`clientSession`, alone); `apiKeyId` is null for a token alone.
 */
export interface ResellerCaller {
  kind: 'reseller';
  resellerId: string;
  apiKeyId: string | null;
  currency: string;
  lookup?: LookupScope;
  clientSession?: ClientSessionScope;
  /** The reseller's own rate limit per key (docs/operator-guide.md "Rate limits"); absent: the configured default. */
  rateLimit?: { perSecond: number; burst: number };
}
/** A provider acting on its own bookings with a provider API key (docs/partner-guide.md "Provider side"). */
export interface ProviderCaller {
  kind: 'provider';
  providerId: string;
  providerKeyId: string;
}
export type Caller = ResellerCaller | ProviderCaller | { kind: 'anonymous' };
/** The callers an API key authenticates; each surface takes one kind (src/platform/auth.ts). */
export type KeyCaller = ResellerCaller | ProviderCaller;

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
  /**
   * The URL clients reach this service at, for links it hands out (a hosted session's page):
   * PUBLIC_BASE_URL, else `http://` + the request's Host header (development; docs/operator-guide.md "Configuration").
   */
  origin?: string;
  /** The process's kept catalogue rows (src/platform/catalogue-cache.ts); absent outside a server (the CLI, background work). */
  catalogue?: CatalogueCache;
}

/** A Host header fit to build a link with: a host name or address and an optional port, nothing else. */
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

export function originOf(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>, host: string | undefined): string {
  if (config.PUBLIC_BASE_URL !== undefined) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return host !== undefined && HOST.test(host) ? `http://${host}` : `http://${config.HOST}:${config.PORT}`;
}

export const newRequestId = (): string => newId('request');

/**
 * The context of work no request asked for (the background sweeps): an anonymous caller and an id
 * of its own for the logs and the events it records, which then name their reseller themselves.
 */
export function backgroundCtx(em: EntityManager, deps: Pick<Ctx, 'clock' | 'config' | 'log'>): Ctx {
  return { em, caller: { kind: 'anonymous' }, clock: deps.clock, config: deps.config, log: deps.log, requestId: newRequestId() };
}

/** The reseller the caller acts for; services call this so an anonymous caller can never slip through. */
export function resellerOf(ctx: Pick<Ctx, 'caller'>): ResellerCaller {
  if (ctx.caller.kind !== 'reseller') throw new Error('a reseller caller is required here');
  return ctx.caller;
}

/** The lookup scope of a token caller (docs/partner-guide.md "Lookup"), or undefined for every other caller. */
export function lookupScopeOf(ctx: Pick<Ctx, 'caller'>): LookupScope | undefined {
  return ctx.caller.kind === 'reseller' ? ctx.caller.lookup : undefined;
}

/** The client-session scope of a token caller, or undefined for every other caller. */
export function clientSessionOf(ctx: Pick<Ctx, 'caller'>): ClientSessionScope | undefined {
  return ctx.caller.kind === 'reseller' ? ctx.caller.clientSession : undefined;
}

/** The provider the caller acts for; the provider side's use cases call this, so no other caller slips through. */
export function providerOf(ctx: Pick<Ctx, 'caller'>): ProviderCaller {
  if (ctx.caller.kind !== 'provider') throw new Error('a provider caller is required here');
  return ctx.caller;
}

export function withEm(ctx: Ctx, em: EntityManager): Ctx {
  return { ...ctx, em };
}
