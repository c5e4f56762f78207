import { expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { lookUp, useLookupWorld, withToken, type LookupWorld, type TestSmtp } from '../support/lookups.ts';
import { openStream } from '../support/sse.ts';

// A Service-Lookup-Token (docs/partner-guide.md "Lookup") authorises only the fields that take one;
// no subscription does, and a subscription never reaches the plugin's execute hook: it is refused
// before its stream opens (src/graphql/plugins/lookup-token-scope.ts onSubscribe).

const app = useApp();
let world: LookupWorld;
let smtp: TestSmtp;
useLookupWorld(app, (w, s) => {
  world = w;
  smtp = s;
});

it('a Service-Lookup-Token opening a subscription is 403 permission_denied; no event is streamed', async () => {
  const { token } = await lookUp(app, smtp, world.requester, world.issuer.id, world.client.id);
  const refused = await openStream(app.baseUrl, undefined, 'subscription { bookingStatusChanged { eventId } }', {
    headers: withToken(token),
  });
  await refused.ended;
  expect(refused.status).toBe(403);
  const body = refused.messages[0]?.json ?? JSON.parse(refused.text!);
  expect(body.errors[0].extensions.code).toBe('permission_denied');
  expect(body.data).toBeUndefined();
});
