import { z } from 'zod';

// V3 presenter of a reseller's CORS allow-list (docs/partner-guide.md "Calling from a browser").

export const corsOriginsSchema = z
  .object({
    object: z.literal('cors_origins').describe('Always `cors_origins`'),
    origins: z.array(z.string()).describe('The origins whose pages may call /graphql with a client-session token, in alphabetical order'),
  })
  .meta({ id: 'CorsOrigins', description: "The reseller's CORS allow-list for /graphql" });
export type CorsOriginsResource = z.infer<typeof corsOriginsSchema>;

export function presentCorsOrigins(origins: string[]): CorsOriginsResource {
  return { object: 'cors_origins', origins };
}
