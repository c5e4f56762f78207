import { z } from 'zod';
import { catalogue, errorTypes, type ErrorCode } from '../platform/errors.ts';
import type { Route, RouteTable } from './route.ts';
import { providerApi, V3_BASE } from './router.ts';

let cached: object | undefined;

type JsonSchema = Record<string, unknown>;

// Response headers, written out in each response (not as $refs) so generated clients see which are required.
const REQUEST_ID = {
  description: 'The id of this request, also in error bodies as `request_id`',
  required: true,
  schema: { type: 'string' },
};
const IDEMPOTENT_REPLAYED = {
  description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key (successes and 4xx are stored)',
  required: false,
  schema: { type: 'string', enum: ['true'] },
};
const ALLOW = { description: 'The methods this path takes, comma-separated', required: true, schema: { type: 'string' } };
const RETRY_AFTER = { description: 'Seconds to wait before trying again', required: true, schema: { type: 'integer', minimum: 1 } };
/** The IETF RateLimit fields of a 429 (docs/operator-guide.md "Rate limits"). */
const RATE_LIMIT_FIELDS = {
  'RateLimit-Policy': {
    description: 'The limit that refused the request: `"<key|failed_auth|redeem|lookups_per_client>";q=<points>;w=<seconds>`',
    required: true,
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left of it: `"<limit>";r=<points left>;t=<seconds until it refills>`',
    required: true,
    schema: { type: 'string' },
  },
};

// Each table's key: the reseller API's is the document's default, the provider API's is set per operation.
const securityOf = { reseller: 'bearerAuth', provider: 'providerKey' } as const;

/**
 * OpenAPI 3.1 for the REST adapter, generated from the route tables and their zod schemas: the
 * query and body schemas the router parses with, and the presenters' response schemas. `routes`
 * is the reseller API (under /v3/api/business/reseller); the provider API (`provider`, under
 * /v3/api/provider, docs/partner-guide.md "Provider side") is documented beside it with its own key.
 */
export function openApiDocument(routes: Route[], provider: RouteTable = providerApi): object {
  if (cached) return cached;
  const schemas: Record<string, JsonSchema> = {};
  // The 405 every operation refers to, and the 404 of a path outside the document (test/contract/response-schemas.ts reads both).
  const shared: Record<string, unknown> = {
    NoSuchPath: errorResponse(['resource_not_found'], 'A path outside this document: `resource_not_found`.', {}),
    MethodNotAllowed: errorResponse(codesWithStatus(405), 'A method this path does not take; `Allow` lists the ones it does.', {
      Allow: ALLOW,
    }),
  };
  const paths: Record<string, Record<string, unknown>> = {};
  const tables: RouteTable[] = [{ base: V3_BASE, caller: 'reseller', routes }, provider];
  for (const table of tables) {
    for (const route of table.routes) {
      const item = (paths[`${table.base}${route.path}`] ??= {});
      item[route.method.toLowerCase()] = operation(table, route, schemas);
    }
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Reseller Pass, Booking and Access Service (V3 REST adapter)',
      version: '3.0.0',
      description:
        "Thin V3-compatible adapter over the GraphQL gateway's domain services. " +
        'Timestamps are Unix seconds; money is integer minor units with an ISO-4217 currency. ' +
        'Every response carries `Request-Id`. A path outside this document answers 404 `resource_not_found` ' +
        '(components/responses/NoSuchPath); a method a path does not take answers 405 `method_not_allowed` with `Allow`. ' +
        'Two APIs, each with its own key: the reseller API under /v3/api/business/reseller (`bearerAuth`, sk_…) and the ' +
        'provider API under /v3/api/provider (`providerKey`, pk_…); a key of the other kind answers 403 `permission_denied`.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A reseller API key, sk_…' },
        lookupToken: {
          type: 'apiKey',
          in: 'header',
          name: 'Service-Lookup-Token',
          description:
            "A lookup token, lkpt_… (POST /lookups/{id}/verify): acts for its one client, alone or beside the reseller's " +
            'own bearer key (docs/partner-guide.md "Lookup"); only operations listing it take it, any other answers 403 `permission_denied`.',
        },
        providerKey: { type: 'http', scheme: 'bearer', description: 'A provider API key, pk_… (the provider API, /v3/api/provider)' },
      },
      schemas: { Error: errorSchema(), ...sortedByKey(schemas) },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: '1–255 printable ASCII characters; a UUID is recommended. Replays for 90 s.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      responses: sortedByKey(shared),
    },
    paths,
  };
  return cached;
}

function operation(table: RouteTable, route: Route, schemas: Record<string, JsonSchema>) {
  const parameters: unknown[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.query) {
    const schema = toJsonSchema(route.query, 'input', schemas) as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, { description, ...s }] of Object.entries(schema.properties ?? {})) {
      parameters.push({
        name,
        in: 'query',
        required: schema.required?.includes(name) ?? false,
        ...(description ? { description } : {}),
        schema: s,
      });
    }
  }
  if (route.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const takesBody = route.body !== undefined && route.method !== 'GET';
  const replayed = route.idempotent ? { 'X-Idempotent-Replayed': IDEMPOTENT_REPLAYED } : {};
  const responses: Record<string, unknown> = {
    [route.success.status]: {
      description: route.success.description,
      headers: { 'Request-Id': REQUEST_ID, ...replayed },
      content: { 'application/json': { schema: toJsonSchema(route.success.schema, 'output', schemas) } },
    },
  };
  for (const [status, codes] of errorsByStatus(table, route, takesBody)) {
    // Authentication, the method and the body size are checked before the Idempotency-Key, so those are never replays;
    // an unexpected failure (5xx) rolls back and is not stored either.
    const stored = status !== 401 && status !== 403 && status !== 413 && status < 500;
    const retryAfter =
      status === 429 ? { 'Retry-After': RETRY_AFTER, ...RATE_LIMIT_FIELDS } : status === 503 ? { 'Retry-After': RETRY_AFTER } : {};
    responses[status] = errorResponse(codes, codes.map((c) => `\`${c}\`: ${catalogue[c].meaning}`).join(' '), {
      ...(stored ? replayed : {}),
      ...retryAfter,
    });
  }
  responses[405] = { $ref: '#/components/responses/MethodNotAllowed' };

  let requestBody: unknown;
  if (route.body && takesBody) {
    const schema = toJsonSchema(route.body, 'input', schemas);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    requestBody = { required, content: { 'application/json': { schema } } };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(table.caller === 'reseller' ? {} : { security: [{ [securityOf[table.caller]]: [] }] }),
    // A route that takes a lookup token: the key, the token, or both (docs/partner-guide.md "Lookup").
    ...(route.takesLookupToken ? { security: [{ bearerAuth: [] }, { lookupToken: [] }, { bearerAuth: [], lookupToken: [] }] } : {}),
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses: sortedByKey(responses),
  };
}

/**
 * The route's declared error codes plus those every route can answer: the router's own checks
 * (an unknown query parameter, authentication, a key of the other API, an id naming nothing, a
 * body too large), the rate limits, the unexpected failure and the database unreachable. Only a reseller key has an account that can be disabled.
 */
function errorsByStatus(table: RouteTable, route: Route, takesBody: boolean): [number, ErrorCode[]][] {
  const auth: ErrorCode[] =
    table.caller === 'reseller' ? ['invalid_api_key', 'permission_denied', 'account_disabled'] : ['invalid_api_key', 'permission_denied'];
  const codes = new Set<ErrorCode>([...route.errors, 'validation_error', ...auth, 'rate_limited', 'internal_error', 'service_unavailable']);
  if (route.takesLookupToken) codes.add('invalid_lookup_token');
  if (route.path.includes('{')) codes.add('resource_not_found');
  if (takesBody) codes.add('body_too_large');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(catalogue[code].status, [...(byStatus.get(catalogue[code].status) ?? []), code]);
  return [...byStatus].sort(([a], [b]) => a - b);
}

const codesWithStatus = (status: number) => (Object.keys(catalogue) as ErrorCode[]).filter((code) => catalogue[code].status === status);

/** An error response whose body can carry only the listed codes (the Error schema, narrowed). */
function errorResponse(codes: ErrorCode[], description: string, headers: Record<string, unknown>) {
  const narrowed = {
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: { code: { type: 'string', enum: codes } },
      },
    },
  };
  return {
    description,
    headers: { 'Request-Id': REQUEST_ID, ...headers },
    content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, narrowed] } } },
  };
}

/**
 * JSON Schema 2020-12 of a zod schema. Named schemas (`.meta({ id })`) move to
 * components/schemas; `io` is 'input' for what the API reads and 'output' for what it writes
 * (objects then get `additionalProperties: false`, so an undocumented field is visible).
 */
function toJsonSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const generated = z.toJSONSchema(schema, {
    io,
    // Query parameters are strings parsed by transforms; responses must be fully representable.
    unrepresentable: io === 'input' ? 'any' : 'throw',
    override: documentedForm,
  }) as JsonSchema;
  const { $schema: _, $defs, ...rest } = generated;
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    const linked = relinked(def);
    if (components[name] && JSON.stringify(components[name]) !== JSON.stringify(linked)) {
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    }
    components[name] = linked;
  }
  return relinked(rest);
}

const relinked = (s: JsonSchema): JsonSchema =>
  JSON.parse(JSON.stringify(s).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;

/**
 * What a client sends rather than how the server parses it. A query parameter parsed from its
 * string by a transform (limit, lat, …) states its documented form in `.meta({ openapi })`; a
 * string piped into an enum (a case-insensitive filter) documents the enum's values.
 */
function documentedForm(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }): void {
  const json = ctx.jsonSchema as JsonSchema;
  const documented = z.globalRegistry.get(ctx.zodSchema)?.openapi as JsonSchema | undefined;
  if (documented) {
    const { description } = json;
    for (const key of Object.keys(json)) delete json[key];
    Object.assign(json, description ? { description } : {}, documented);
    return;
  }
  // z.int() states JavaScript's safe-integer range, which says nothing a partner needs.
  if (json.type === 'integer') {
    if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
    if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  }
  const def = ctx.zodSchema._zod.def;
  if (def.type === 'pipe' && def.out._zod.def.type === 'enum' && json.type === 'string') {
    json.enum = Object.values((def.out as z.core.$ZodEnum)._zod.def.entries);
  }
}

function errorSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'The error envelope of every 4xx and 5xx response (docs/errors.md)',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        description: 'What went wrong',
        required: ['type', 'code', 'message', 'request_id'],
        additionalProperties: false,
        properties: {
          type: { type: 'string', enum: Object.keys(errorTypes), description: 'The error type: what kind of problem it is' },
          code: { type: 'string', enum: Object.keys(catalogue), description: 'The catalogue code: which problem it is' },
          message: { type: 'string', description: 'Human-readable; not for parsing' },
          param: { type: 'string', description: 'The input field at fault (dot path for nested body fields), when there is one' },
          request_id: { type: 'string', description: 'The `Request-Id` of the request' },
        },
      },
    },
  };
}

const sortedByKey = <T>(o: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b, 'en')));
