import { GraphQLError, Kind } from 'graphql';
import { builder } from './builder.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isCalendarDate = (s: string) => DATE.test(s) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;

builder.scalarType('DateTime', {
  description: 'An instant, RFC 3339 in UTC (e.g. 2026-11-22T10:00:00Z).',
  serialize: (d) => (d as Date).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  parseValue: (v) => {
    const d = typeof v === 'string' ? new Date(v) : new Date(NaN);
    if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(v) || Number.isNaN(d.getTime())) {
      throw new GraphQLError('DateTime must be an RFC 3339 timestamp');
    }
    return d;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string');
    const d = new Date(ast.value);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(ast.value) || Number.isNaN(d.getTime())) throw new GraphQLError('DateTime must be an RFC 3339 timestamp');
    return d;
  },
});

builder.scalarType('Date', {
  description: 'A calendar date, YYYY-MM-DD.',
  serialize: (v) => String(v),
  parseValue: (v) => {
    if (typeof v !== 'string' || !isCalendarDate(v)) throw new GraphQLError('Date must be YYYY-MM-DD');
    return v;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isCalendarDate(ast.value)) throw new GraphQLError('Date must be YYYY-MM-DD');
    return ast.value;
  },
});
