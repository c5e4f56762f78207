// What a user might pick instead (d): PostGraphile 5 over the same database, exposing only the
// pass_package table (request-path/postgraphile-server.ts). With BENCH_AUTH=true every request first
// looks up its API key as our server does.
import { servePostGraphile } from './postgraphile-server.ts';

await servePostGraphile({
  behaviourOf: (table) => (table === 'pass_package' ? undefined : ['-*']),
  withKeyLookup: process.env.BENCH_AUTH === 'true',
});
