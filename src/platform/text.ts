import { isUtf8 } from 'node:buffer';
import { validationError } from './errors.ts';

// The one text rule for every string input on both surfaces (bodies, query parameters, GraphQL
// arguments and variables): valid Unicode without NUL, else 400 `validation_error` naming it.
// PostgreSQL text cannot hold NUL, and a lone surrogate or invalid UTF-8 would be stored as U+FFFD:
// never accept what cannot be stored as sent.

/** Why `s` is not acceptable text, or undefined when it is. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'Text may not contain NUL characters';
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'Text must be valid Unicode (a lone surrogate was sent)';
  return undefined;
}

export function checkText(s: string, param: string): string {
  const problem = textProblem(s);
  if (problem) throw validationError(param, problem);
  return s;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a body as UTF-8, refusing invalid sequences instead of replacing them. */
export function decodeUtf8(bytes: Uint8Array, param = 'body'): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw notUtf8(param);
  }
}

/** decodeUtf8's check alone, for bytes another parser decodes: no string is made. */
export function checkUtf8(bytes: Uint8Array, param = 'body'): void {
  if (!isUtf8(bytes)) throw notUtf8(param);
}

const notUtf8 = (param: string) => validationError(param, 'The request body is not valid UTF-8');

export const MAX_JSON_DEPTH = 32;

/**
 * Walks a parsed JSON value once, without recursion (a deep value must not exhaust the stack):
 * every string and key obeys the text rule, and nesting stays within MAX_JSON_DEPTH.
 * `root` names the value in errors (`body`, `variables`); nested params are dotted paths.
 */
export function checkJsonText(value: unknown, root: string, prefix = ''): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: prefix, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      checkText(v, path || root);
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_JSON_DEPTH) throw validationError(path || root, `The ${root} is nested more than ${MAX_JSON_DEPTH} levels deep`);
      for (const [k, item] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k;
        const problem = textProblem(k);
        if (problem) throw validationError(at, `Field name: ${problem}`);
        stack.push({ value: item, path: at, depth: depth + 1 });
      }
    }
  }
}

/**
 * A query string, strictly decoded: `URLSearchParams` turns bad percent-encoding into U+FFFD,
 * `decodeURIComponent` refuses it (and encoded lone surrogates), so the text rule sees what was sent.
 */
export function parseQueryString(search: string): URLSearchParams {
  const params = new URLSearchParams();
  const source = search.startsWith('?') ? search.slice(1) : search;
  if (source === '') return params;
  for (const pair of source.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const name = decodeComponent(rawName, 'query');
    params.append(checkText(name, 'query'), checkText(decodeComponent(rawValue, name), name));
  }
  return params;
}

function decodeComponent(s: string, param: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw validationError(param, 'The query string is not valid percent-encoded UTF-8');
  }
}
