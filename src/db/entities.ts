import { ResellerSchema, ApiKeySchema, ResellerCorsOriginSchema } from '../modules/resellers/resellers.entity.ts';
import { BusinessTransactionSchema } from '../modules/ledger/ledger.entity.ts';
import { CreditTransactionSchema, CreditPackageSchema, CreditPurchaseSchema } from '../modules/credits/credits.entity.ts';
import { ClientSchema } from '../modules/clients/clients.entity.ts';
import { PassPackageSchema, IssuedPassSchema, VisitEntitlementSchema } from '../modules/passes/passes.entity.ts';
import { BookingSchema, BookingSessionSchema } from '../modules/bookings/bookings.entity.ts';
import { ProviderSchema, CopayOptionSchema, ProviderApiKeySchema } from '../modules/providers/providers.entity.ts';
import { SpaServiceSchema } from '../modules/spa/spa.entity.ts';
import { ClassCategorySchema, ClassSchema, ClassInstanceSchema } from '../modules/classes/classes.entity.ts';
import { AccessCodeSchema, AccessCodeSessionSchema } from '../modules/access-codes/access-codes.entity.ts';
import { LookupSchema } from '../modules/lookups/lookups.entity.ts';
import { HostedSessionSchema } from '../modules/hosted-sessions/hosted-sessions.entity.ts';
import { ClientSessionSchema } from '../modules/client-sessions/client-sessions.entity.ts';
import { EventSchema } from '../modules/events/events.entity.ts';
import { WebhookEndpointSchema, WebhookDeliverySchema } from '../modules/webhooks/webhooks.entity.ts';
import { TrustedDocumentSchema } from '../modules/trusted-documents/trusted-documents.entity.ts';

// Every module's entities, registered explicitly.
export const entities = [
  ResellerSchema,
  ApiKeySchema,
  BusinessTransactionSchema,
  CreditTransactionSchema,
  ClientSchema,
  PassPackageSchema,
  IssuedPassSchema,
  ProviderSchema,
  CopayOptionSchema,
  SpaServiceSchema,
  ClassCategorySchema,
  ClassSchema,
  ClassInstanceSchema,
  VisitEntitlementSchema,
  BookingSchema,
  BookingSessionSchema,
  ProviderApiKeySchema,
  AccessCodeSchema,
  AccessCodeSessionSchema,
  EventSchema,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  CreditPackageSchema,
  CreditPurchaseSchema,
  LookupSchema,
  HostedSessionSchema,
  ResellerCorsOriginSchema,
  TrustedDocumentSchema,
  ClientSessionSchema,
];
