import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/rest/openapi.ts';
import { routes } from '../../src/rest/router.ts';

// Holds every V3 response a test sees to the OpenAPI document the route table generates (the one
// served and committed as docs/openapi.json): its status must be documented for the operation, its
// body must match that status's schema (objects are closed, so an undocumented field fails), and
// its documented required headers must be there.

interface Header {
  required?: boolean;
  $ref?: string;
}
interface Response {
  $ref?: string;
  headers?: Record<string, Header>;
  content?: Record<string, unknown>;
}
interface Operation {
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Response>; headers: Record<string, Header> };
}

const BASE = '/v3/api/business/reseller';
const DOC_ID = 'openapi.json';
const document = openApiDocument(routes) as Document;

// The whole document is one schema resource, so `#/components/schemas/…` refs resolve inside it;
// strict mode is off because OpenAPI's own keywords (paths, operationId …) are not JSON Schema.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(document, DOC_ID);
const compiled = new Map<string, ValidateFunction>();

const templates = Object.keys(document.paths).map((template) => ({
  template,
  params: (template.match(/\{/g) ?? []).length,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
}));

export interface SeenResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/**
 * Throws, naming method, path, status and the schema errors, when the response is not what the
 * document promises. A path outside the document is held to components/responses/NoSuchPath
 * (404), a method a documented path does not take to components/responses/MethodNotAllowed (405).
 */
export function checkDocumentedResponse(method: string, url: string, res: SeenResponse): void {
  const path = url.split('?')[0];
  // The document itself is served beside the operations it describes, not as one of them.
  if (method === 'GET' && path === `${BASE}/openapi.json`) return;
  const where = `${method} ${path} answered ${res.status}`;
  const { pointer, response } = documentedResponse(method, path, res.status, where);

  for (const [name, declared] of Object.entries(response.headers ?? {})) {
    const header = declared.$ref ? resolve<Header>(declared.$ref) : declared;
    if (header.required && !res.headers.has(name)) fail(where, `the documented header ${name} is missing`);
  }
  if (res.headers.has('X-Idempotent-Replayed') && !response.headers?.['X-Idempotent-Replayed']) {
    fail(where, 'X-Idempotent-Replayed is not documented for this response');
  }
  if (!response.content?.['application/json']) fail(where, 'the document gives this response no JSON body');
  if (!/^application\/json\b/.test(res.headers.get('content-type') ?? '')) {
    fail(where, `Content-Type is ${res.headers.get('content-type')}, not application/json`);
  }
  const validate = validatorAt(`${pointer}/content/application~1json/schema`);
  if (!validate(res.body)) {
    const errors = (validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`).join('\n');
    fail(where, `the body does not match its documented schema (${pointer}):\n${errors}\nbody: ${res.text.slice(0, 2000)}`);
  }
}

function documentedResponse(method: string, path: string, status: number, where: string): { pointer: string; response: Response } {
  const matching = templates.filter((t) => t.pattern.test(path));
  if (matching.length === 0) {
    if (status !== 404) fail(where, 'the path is in no operation of the document, which answers 404 NoSuchPath');
    return component('NoSuchPath');
  }
  const lowered = method.toLowerCase();
  // A literal segment wins over a parameter (/issued_passes/update over /issued_passes/{client_id}).
  const taking = matching.filter((t) => document.paths[t.template][lowered]).sort((a, b) => a.params - b.params)[0];
  if (!taking) {
    if (status !== 405) fail(where, 'no operation takes this method on this path, which answers 405 MethodNotAllowed');
    return component('MethodNotAllowed');
  }
  const responses = document.paths[taking.template][lowered].responses;
  const response = responses[String(status)];
  if (!response)
    fail(where, `status ${status} is not documented for ${lowered} ${taking.template} (documented: ${Object.keys(responses).join(', ')})`);
  const pointer = `#/paths/${escape(taking.template)}/${lowered}/responses/${status}`;
  if (response.$ref) return { pointer: response.$ref, response: resolve<Response>(response.$ref) };
  return { pointer, response };
}

const component = (name: string) => ({ pointer: `#/components/responses/${name}`, response: document.components.responses[name] });

function validatorAt(pointer: string): ValidateFunction {
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}${pointer}` });
    compiled.set(pointer, validate);
  }
  return validate;
}

/** A local `#/…` reference of the document. */
function resolve<T>(ref: string): T {
  return ref
    .slice(2)
    .split('/')
    .map(unescape)
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as T;
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
const unescape = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~');

function fail(where: string, problem: string): never {
  throw new Error(`Undocumented V3 response: ${where}: ${problem} (docs/openapi.json, generated by src/rest/openapi.ts)`);
}
