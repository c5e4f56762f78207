import { z } from 'zod';
import { catalogue, type ErrorCode } from '../platform/errors.ts';
import type { Route } from './route.ts';

const BASE = '/v3/api/business/reseller';
let cached: object | undefined;

/** OpenAPI 3.1 for the REST adapter, generated from the route table and its zod schemas. */
export function openApiDocument(routes: Route[]): object {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const item = (paths[`${BASE}${route.path}`] ??= {});
    item[route.method.toLowerCase()] = operation(route);
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Reseller Pass, Booking and Access Service (V3 REST adapter)',
      version: '3.0.0',
      description: 'Thin V3-compatible adapter over the GraphQL gateway\'s domain services. ' +
        'Timestamps are Unix seconds; money is integer minor units with an ISO-4217 currency.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A reseller API key, sk_…' } },
      schemas: { Error: errorSchema() },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key', in: 'header', required: false,
          description: '1–255 printable ASCII characters; a UUID is recommended. Replays for 90 s.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
    },
    paths,
  };
  return cached;
}

function operation(route: Route) {
  const parameters: unknown[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.query) {
    const schema = z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>; required?: string[];
    };
    for (const [name, s] of Object.entries(schema.properties ?? {})) {
      parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: s });
    }
  }
  if (route.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  const codes = [...new Set(route.errors)];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(catalogue[code].status, [...(byStatus.get(catalogue[code].status) ?? []), code]);
  const responses: Record<string, unknown> = {
    [route.success.status]: { description: route.success.description, content: { 'application/json': { schema: { type: 'object' } } } },
  };
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: list.map((c) => `\`${c}\`: ${catalogue[c].meaning}`).join(' '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters,
    ...(route.body && route.method !== 'GET'
      ? { requestBody: { required: false, content: { 'application/json': { schema: z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) } } } }
      : {}),
    responses,
  };
}

function errorSchema() {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['type', 'code', 'message', 'request_id'],
        properties: {
          type: { type: 'string', enum: [...new Set(Object.values(catalogue).map((e) => e.type))] },
          code: { type: 'string', enum: Object.keys(catalogue) },
          message: { type: 'string' },
          param: { type: 'string' },
          request_id: { type: 'string' },
        },
      },
    },
  };
}
