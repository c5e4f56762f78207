import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from './builder.ts';

// Strict RFC 3339 (docs/errors.md): an instant must carry its offset and name a real calendar
// day and clock time, so `2027-02-30` never rolls over into March and nothing is read in the
// server's zone. Written by hand: JavaScript's Date parser is lenient in exactly those ways.

//                    year    month   day      T   hour    minute  second  fraction    offset
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number) => [31, isLeapYear(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
const isCalendarDay = (y: number, m: number, d: number) => m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);

/** `YYYY-MM-DD` naming a day that exists (29 February only in leap years). */
export function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * The instant an RFC 3339 date-time names, or null. The offset (`Z` or `±HH:MM`) is required.
 * Hours 00–23 (no `24:00`); seconds 00–59: a leap second (`:60`) is refused, since a Date
 * cannot represent it. Fractional seconds of any length are truncated to milliseconds.
 */
export function parseDateTime(text: string): Date | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (!isCalendarDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  const millis = m[7] ? Number(m[7].slice(1, 4).padEnd(3, '0')) : 0;
  let offsetMinutes = 0;
  if (m[9]) {
    const [offsetHours, offsetMins] = [Number(m[10]), Number(m[11])];
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const instant = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years 0–99 as written.
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, millis);
  return new Date(instant.getTime() - offsetMinutes * 60_000);
}

// `ast` (an inline literal) gives the error its location in the document.
function dateTimeOf(value: unknown, ast?: ValueNode): Date {
  const instant = typeof value === 'string' ? parseDateTime(value) : null;
  if (!instant) throw new GraphQLError('DateTime must be an RFC 3339 date-time with an offset, e.g. 2026-11-22T10:00:00Z', { nodes: ast });
  return instant;
}

function dateOf(value: unknown, ast?: ValueNode): string {
  if (typeof value !== 'string' || !isCalendarDate(value))
    throw new GraphQLError('Date must be YYYY-MM-DD naming a real calendar day', { nodes: ast });
  return value;
}

const stringLiteral = (ast: ValueNode): string | undefined => (ast.kind === Kind.STRING ? ast.value : undefined);

builder.scalarType('DateTime', {
  description: 'An instant, RFC 3339 with an offset (`Z` or `±HH:MM`, e.g. 2026-11-22T10:00:00Z); answered in UTC.',
  serialize: (d) => (d as Date).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  parseValue: (value) => dateTimeOf(value),
  parseLiteral: (ast) => dateTimeOf(stringLiteral(ast), ast),
});

builder.scalarType('Date', {
  description: 'A calendar date, YYYY-MM-DD.',
  serialize: (v) => String(v),
  parseValue: (value) => dateOf(value),
  parseLiteral: (ast) => dateOf(stringLiteral(ast), ast),
});
