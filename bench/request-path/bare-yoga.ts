// Baseline (b): a bare graphql-yoga server with a one-field schema, answering `{ __typename }`
// on POST /graphql; yoga's defaults otherwise (its parse and validation caches on).
import http from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';
import { exitWithParent } from './processes.ts';

exitWithParent();
const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean! }', resolvers: { Query: { ok: () => true } } }),
  logging: false,
});
http.createServer(yoga).listen(Number(process.env.PORT), '127.0.0.1');
