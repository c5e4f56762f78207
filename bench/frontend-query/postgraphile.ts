// PostGraphile 5 answering the frontend "my bookings" shape (bench/README.md "Frontend query") over
// the same database as our server (request-path/postgraphile-server.ts): only the tables that shape
// reads are exposed (client, booking, provider, issued_pass, pass_package), read-only, with the
// relations PostGraphile derives from their foreign keys (bookingsByClientId, providerByProviderId,
// issuedPassesByClientId, passPackageByPassId); every request first looks up its API key.
import { servePostGraphile } from '../request-path/postgraphile-server.ts';

const exposed = ['client', 'booking', 'provider', 'issued_pass', 'pass_package'];

await servePostGraphile({
  behaviourOf: (table) => (exposed.includes(table) ? ['-insert', '-update', '-delete'] : ['-*']),
  withKeyLookup: true,
});
