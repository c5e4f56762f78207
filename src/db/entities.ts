import { ResellerSchema, ApiKeySchema } from '../modules/resellers/resellers.entity.ts';
import { BusinessTransactionSchema } from '../modules/ledger/ledger.entity.ts';
import { CreditTransactionSchema } from '../modules/credits/credits.entity.ts';
import { ClientSchema } from '../modules/clients/clients.entity.ts';
import { PassPackageSchema, IssuedPassSchema, VisitEntitlementSchema } from '../modules/passes/passes.entity.ts';
import { BookingSchema, BookingSessionSchema } from '../modules/bookings/bookings.entity.ts';
import { ProviderSchema, CopayOptionSchema, ProviderApiKeySchema } from '../modules/providers/providers.entity.ts';
import { SpaServiceSchema } from '../modules/spa/spa.entity.ts';
import { ClassCategorySchema, ClassSchema, ClassInstanceSchema } from '../modules/classes/classes.entity.ts';

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
];
