import { z } from 'zod';
import { validationError } from './errors.ts';

/**
 * Parses input with a zod schema and turns the first problem into a 400 `validation_error`
 * naming the field (`param`), so every surface reports bad input the same way.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, paramPrefix = ''): z.infer<S> {
  // reportInput: without it zod leaves issue.input unset and every wrong type read as "missing".
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  let path = issue.path.map(String);
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0]];
    message = `Unknown field '${path.join('.')}'`;
  } else if (issue.code === 'invalid_type' && issue.input === undefined) {
    message = `Missing required field '${path.join('.')}'`;
  }
  const param = [paramPrefix, ...path].filter(Boolean).join('.') || 'body';
  return failWith(param, message);
}

function failWith(param: string, message: string): never {
  throw validationError(param, message);
}

// Shared field formats, so a date or an id is checked the same way everywhere.
export const localDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Expected a date as YYYY-MM-DD')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, 'Not a calendar date');

export const unixTimestamp = z
  .number({ error: 'Expected an integer Unix timestamp (seconds)' })
  .int('Expected an integer Unix timestamp (seconds)')
  .min(0)
  .max(253_402_300_799);

export const email = z.email('Expected an e-mail address').max(254);
// PostgreSQL text cannot hold NUL: refuse it here rather than fail the insert with a 500.
export const noNul = (s: string) => !s.includes('\u0000');
export const shortText = (max: number) =>
  z.string().trim().min(1, 'Must not be empty').max(max).refine(noNul, 'Must not contain NUL characters');
export const phone = z.string().regex(/^\+?[0-9 ()-]{4,32}$/, 'Expected a phone number');
