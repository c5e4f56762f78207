import { afterEach, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { dbState } from '../support/db-state.ts';
import { createReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { createEndpoint, deliveriesOf, dispatch, makeEvent, passFor, Receiver, settlePendingDeliveries } from '../support/webhooks.ts';

// Webhook endpoints on both surfaces (docs/partner-guide.md "Webhooks"): the secret is shown by create and rotate
// only and kept sealed; bad input is a 400 naming the field with nothing written; another
// reseller's endpoint is a 404. Private targets are allowed here (WEBHOOK_ALLOW_PRIVATE_URLS) and
// refused by the second app, which keeps the default.

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const strict = useApp();
afterEach(async () => {
  await settlePendingDeliveries(app);
});

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/; // 32 random bytes, base64
const URL_OK = 'https://hooks.example.com/gateway';

describe('POST /webhook_endpoints', () => {
  it('201 with the secret once; GET and the list never show it; the row keeps it sealed', async () => {
    const reseller = await createReseller(app);
    const res = await v3(app, '/webhook_endpoints', {
      key: reseller.key,
      idempotencyKey: 'we-create-1',
      body: { url: URL_OK, enabled_events: ['booking.created', 'issued_pass.created'], description: 'CRM sync' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'webhook_endpoint',
      id: expect.stringMatching(/^we_[0-9A-Z]{26}$/),
      url: URL_OK,
      enabled_events: ['booking.created', 'issued_pass.created'],
      status: 'ENABLED',
      description: 'CRM sync',
      created: Math.floor(app.clock.now().getTime() / 1000),
      secret: expect.stringMatching(SECRET),
    });
    const { id, secret } = res.body;

    // A retry with the same key is the same answer (the stored response is sealed too).
    const replay = await v3(app, '/webhook_endpoints', {
      key: reseller.key,
      idempotencyKey: 'we-create-1',
      body: { url: URL_OK, enabled_events: ['booking.created', 'issued_pass.created'], description: 'CRM sync' },
    });
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);

    const got = await v3(app, `/webhook_endpoints/${id}`, { key: reseller.key });
    expect(got.status).toBe(200);
    const { secret: _, ...shown } = res.body;
    expect(got.body).toEqual(shown);
    const list = await v3(app, '/webhook_endpoints', { key: reseller.key });
    expect(list.body).toMatchObject({ object: 'list', has_more: false, url: '/v3/api/business/reseller/webhook_endpoints', data: [shown] });
    expect(list.text).not.toContain('whsec_');

    const [row] = await app.sql<{ secret: string }>('select secret from webhook_endpoint where id = ?', [id]);
    expect(row.secret).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    expect(row.secret).not.toContain(secret.slice(6));
    const leaked = await app.sql<{ n: string }>(
      `select (select count(*) from webhook_endpoint where secret like '%whsec_%' or previous_secret like '%whsec_%')
            + (select count(*) from idempotency_record where response_body::text like '%whsec_%') as n`,
    );
    expect(Number(leaked[0].n)).toBe(0);
  });

  it('["*"] subscribes to every type; a type listed twice is kept once; the URL is stored normalised', async () => {
    const reseller = await createReseller(app);
    const all = await createEndpoint(app, reseller, { url: 'https://Hooks.Example.com', enabled_events: ['*'] });
    expect(all).toMatchObject({ enabled_events: ['*'], url: 'https://hooks.example.com/' });
    const twice = await createEndpoint(app, reseller, { url: URL_OK, enabled_events: ['booking.created', 'booking.created'] });
    expect(twice.enabled_events).toEqual(['booking.created']);
    const planned = await createEndpoint(app, reseller, { url: URL_OK, enabled_events: ['hosted_session.completed'] });
    expect(planned.enabled_events).toEqual(['hosted_session.completed']); // catalogued, if not recorded yet
  });

  it('bad input › 400 naming the field, nothing written', async () => {
    const reseller = await createReseller(app);
    const before = await dbState(app);
    const post = (body: unknown) => v3(app, '/webhook_endpoints', { key: reseller.key, body });
    expectValidationError(await post({ enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: URL_OK }), 'enabled_events');
    expectValidationError(await post({ url: 'not a url', enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: 'ftp://hooks.example.com/x', enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: 'https://user:pw@hooks.example.com/x', enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: `https://hooks.example.com/${'x'.repeat(2100)}`, enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: 42, enabled_events: ['*'] }), 'url');
    expectValidationError(await post({ url: URL_OK, enabled_events: [] }), 'enabled_events');
    expectValidationError(await post({ url: URL_OK, enabled_events: 'booking.created' }), 'enabled_events');
    expectValidationError(await post({ url: URL_OK, enabled_events: ['booking.made'] }), 'enabled_events');
    expectValidationError(await post({ url: URL_OK, enabled_events: ['*', 'booking.created'] }), 'enabled_events');
    expectValidationError(await post({ url: URL_OK, enabled_events: ['*'], description: 'x'.repeat(501) }), 'description');
    expectValidationError(await post({ url: URL_OK, enabled_events: ['*'], secret: 'whsec_mine' }), 'secret');
    await expectUnchanged(app, before);
  });

  it('a private, loopback, link-local or unique-local URL › 400 on url without WEBHOOK_ALLOW_PRIVATE_URLS', async () => {
    const reseller = await createReseller(strict);
    const before = await dbState(strict);
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://localhost/hooks',
      'http://api.localhost/hooks',
      'http://10.1.2.3/',
      'http://172.20.0.1/',
      'http://192.168.1.10/',
      'http://169.254.169.254/latest/meta-data',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[fe80::1]/',
      'http://[fd12:3456::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      // every spelling of a private address (decisions §11): IPv4 forms, mapped, compatible, NAT64, 6to4, Teredo
      'http://0x7f.1/',
      'http://0177.0.0.1/',
      'http://127.1:8999/',
      'http://[::ffff:7f00:1]/',
      'http://[::127.0.0.1]/',
      'http://[64:ff9b::127.0.0.1]:8999/',
      'http://[64:ff9b::a00:1]/',
      'http://[64:ff9b:1::1]/',
      'http://[2002:7f00:1::]:8999/',
      'http://[2002:c0a8:101::1]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'http://[::]/',
      'http://[ff02::1]/',
      'http://100.64.0.1/',
      'http://198.18.0.1/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://LOCALHOST./',
    ]) {
      const res = await v3(strict, '/webhook_endpoints', { key: reseller.key, body: { url, enabled_events: ['*'] } });
      expectValidationError(res, 'url');
      expect(res.body.error.message, url).toContain('WEBHOOK_ALLOW_PRIVATE_URLS');
      const gqlRes = await gql(
        strict,
        reseller.key,
        `mutation($i: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $i) {
        __typename ... on InputError { code param } } }`,
        { i: { url, enabledEvents: ['*'] } },
      );
      expect(gqlRes.body.data?.createWebhookEndpoint, url).toEqual({ __typename: 'InputError', code: 'validation_error', param: 'url' });
    }
    await expectUnchanged(strict, before);
    // A public address is fine.
    await createEndpoint(strict, reseller, { url: 'https://93.184.215.14/hooks' });
  });
});

describe('at most 16 endpoints per reseller', () => {
  it('the 17th › 409 endpoint_limit_reached and nothing written; another reseller is unaffected; a delete makes room', async () => {
    const reseller = await createReseller(app);
    const created = await Promise.all(Array.from({ length: 16 }, (_, i) => createEndpoint(app, reseller, { url: `${URL_OK}/${i}` })));
    const before = await dbState(app);
    const res = await v3(app, '/webhook_endpoints', { key: reseller.key, body: { url: URL_OK, enabled_events: ['*'] } });
    expectError(res, 409, 'endpoint_limit_reached');
    expect(res.body.error.type).toBe('resource_conflict_error');
    await expectUnchanged(app, before);
    const other = await createReseller(app);
    await createEndpoint(app, other, { url: URL_OK });
    expect((await v3(app, `/webhook_endpoints/${created[0].id}`, { key: reseller.key, method: 'DELETE' })).status).toBe(200);
    await createEndpoint(app, reseller, { url: URL_OK });
  });

  it('30 creates at once › exactly 16 are created, the rest are 409', async () => {
    const reseller = await createReseller(app);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        v3(app, '/webhook_endpoints', { key: reseller.key, body: { url: `${URL_OK}/${i}`, enabled_events: ['*'] } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(16);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'endpoint_limit_reached')).toHaveLength(14);
    const [row] = await app.sql<{ n: string }>('select count(*)::text as n from webhook_endpoint where reseller_id = ?', [reseller.id]);
    expect(row.n).toBe('16');
  });
});

describe('GET, DELETE, rotate_secret, deliveries: another reseller’s endpoint', () => {
  it('404 on every operation, nothing changed; malformed ids are 404 too', async () => {
    const owner = await createReseller(app);
    const other = await createReseller(app);
    const endpoint = await createEndpoint(app, owner, { url: URL_OK });
    const before = await dbState(app);
    for (const id of [endpoint.id, 'we_nope', 'we_01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      expectError(await v3(app, `/webhook_endpoints/${id}`, { key: other.key }), 404, 'resource_not_found');
      expectError(await v3(app, `/webhook_endpoints/${id}`, { key: other.key, method: 'DELETE' }), 404, 'resource_not_found');
      expectError(await v3(app, `/webhook_endpoints/${id}/rotate_secret`, { key: other.key, method: 'POST' }), 404, 'resource_not_found');
      expectError(await v3(app, `/webhook_endpoints/${id}/deliveries`, { key: other.key }), 404, 'resource_not_found');
      expectError(
        await v3(app, `/webhook_endpoints/${id}/deliveries/whd_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`, { key: other.key, method: 'POST' }),
        404,
        'resource_not_found',
      );
    }
    expectError(
      await v3(app, `/webhook_endpoints/${endpoint.id}/deliveries/whd_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`, {
        key: owner.key,
        method: 'POST',
      }),
      404,
      'resource_not_found',
    );
    await expectUnchanged(app, before);
  });
});

describe('DELETE /webhook_endpoints/{id}', () => {
  it('deletes the endpoint and its deliveries; nothing more is sent to it', async () => {
    const receiver = await Receiver.start({ status: 500 });
    try {
      const reseller = await createReseller(app);
      const pass = await passFor(app, reseller);
      const endpoint = await createEndpoint(app, reseller, { url: receiver.url() });
      await makeEvent(app, reseller, pass);
      await dispatch(app);
      expect(await deliveriesOf(app, endpoint.id)).toHaveLength(1);
      const res = await v3(app, `/webhook_endpoints/${endpoint.id}`, { key: reseller.key, method: 'DELETE' });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ object: 'webhook_endpoint', id: endpoint.id, deleted: true });
      expectError(await v3(app, `/webhook_endpoints/${endpoint.id}`, { key: reseller.key }), 404, 'resource_not_found');
      expectError(await v3(app, `/webhook_endpoints/${endpoint.id}`, { key: reseller.key, method: 'DELETE' }), 404, 'resource_not_found');
      expect(await deliveriesOf(app, endpoint.id)).toEqual([]);
      app.clock.advance(3600_000);
      receiver.behaviour = { status: 200 };
      await makeEvent(app, reseller, pass);
      const received = receiver.receipts.length;
      expect(await dispatch(app)).toBe(0);
      expect(receiver.receipts.length).toBe(received);
    } finally {
      await receiver.down();
    }
  });
});

describe('POST /webhook_endpoints/{id}/rotate_secret', () => {
  it('a new secret, shown once; the row keeps both sealed, the old one for 24 hours', async () => {
    const reseller = await createReseller(app);
    const endpoint = await createEndpoint(app, reseller, { url: URL_OK });
    const res = await v3(app, `/webhook_endpoints/${endpoint.id}/rotate_secret`, { key: reseller.key, method: 'POST' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      object: 'webhook_endpoint',
      id: endpoint.id,
      status: 'ENABLED',
      secret: expect.stringMatching(SECRET),
    });
    expect(res.body.secret).not.toBe(endpoint.secret);
    const [row] = await app.sql<{ secret: string; previous_secret: string; expires: Date }>(
      'select secret, previous_secret, previous_secret_expires_at as expires from webhook_endpoint where id = ?',
      [endpoint.id],
    );
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(row.previous_secret).toMatch(/^sealed:v1:/);
    expect(new Date(row.expires).getTime()).toBe(app.clock.now().getTime() + 24 * 3600_000);
    expectValidationError(
      await v3(app, `/webhook_endpoints/${endpoint.id}/rotate_secret`, { key: reseller.key, body: { secret: 'x' } }),
      'body',
    );
  });
});

describe('GET /events', () => {
  it('lists the events the other operations made, newest first, by type; GET /events/{id}; another reseller’s › 404', async () => {
    app.clock.set(new Date('2027-04-01T10:00:00Z'));
    const reseller = await createReseller(app);
    const pass = await passFor(app, reseller);
    const first = await v3(app, '/issued_passes', {
      key: reseller.key,
      idempotencyKey: 'ev-1',
      body: { pass_id: pass, first_name: 'Ada', last_name: 'L', email: 'ada.events@example.com' },
    });
    const second = await v3(app, '/issued_passes', {
      key: reseller.key,
      body: { pass_id: pass, first_name: 'Grace', last_name: 'H', email: 'grace.events@example.com' },
    });
    const other = await passFor(app, reseller);
    const updated = await v3(app, '/issued_passes/update', {
      key: reseller.key,
      body: { client_id: first.body.client_id, pass_id: other },
    });
    expect(updated.status, updated.text).toBe(200);

    const list = await v3(app, '/events', { key: reseller.key });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false, url: '/v3/api/business/reseller/events' });
    expect(list.body.data.map((e: { type: string }) => e.type)).toEqual([
      'issued_pass.updated',
      'issued_pass.created',
      'issued_pass.created',
    ]);
    const [upd, second_, first_] = list.body.data;
    expect(first_).toEqual({
      id: expect.stringMatching(/^evt_/),
      object: 'event',
      type: 'issued_pass.created',
      created: Math.floor(Date.parse('2027-04-01T10:00:00Z') / 1000),
      data: { object: first.body },
      request: { id: first.headers.get('request-id'), idempotency_key: 'ev-1' },
    });
    expect(Object.keys(first_)).toEqual(['id', 'object', 'type', 'created', 'data', 'request']);
    expect(second_).toMatchObject({
      data: { object: second.body },
      request: { id: second.headers.get('request-id'), idempotency_key: null },
    });
    expect(upd).toMatchObject({ data: { object: updated.body } });

    const created = await v3(app, '/events?type=issued_pass.created&limit=1', { key: reseller.key });
    expect(created.body).toMatchObject({ has_more: true, data: [second_] });
    const next = await v3(app, `/events?type=issued_pass.created&limit=1&starting_after=${second_.id}`, { key: reseller.key });
    expect(next.body).toMatchObject({ has_more: false, data: [first_] });
    expectValidationError(await v3(app, '/events?type=issued_pass.made', { key: reseller.key }), 'type');
    expectError(
      await v3(app, `/events?starting_after=${upd.id.replace('evt_', 'we_')}`, { key: reseller.key }),
      400,
      'invalid_cursor',
      'starting_after',
    );

    const one = await v3(app, `/events/${first_.id}`, { key: reseller.key });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first_);
    const stranger = await createReseller(app);
    expectError(await v3(app, `/events/${first_.id}`, { key: stranger.key }), 404, 'resource_not_found');
    expect((await v3(app, '/events', { key: stranger.key })).body.data).toEqual([]);
    expectError(await v3(app, '/events/evt_nope', { key: reseller.key }), 404, 'resource_not_found');
  });
});

const ENDPOINT_FIELDS = 'id url enabledEvents status description createdAt';
const ERRORS = '... on Error { code message } ... on InputError { param }';

describe('GraphQL', () => {
  it('create, read (webhookEndpoints, webhookEndpoint, node), rotate, delete, with typed errors', async () => {
    const reseller = await createReseller(app);
    const other = await createReseller(app);
    const create = await gql(
      app,
      reseller.key,
      `mutation($input: CreateWebhookEndpointInput!) {
      createWebhookEndpoint(input: $input) { __typename ... on WebhookEndpointSecretPayload { secret webhookEndpoint { ${ENDPOINT_FIELDS} } } ${ERRORS} } }`,
      { input: { url: URL_OK, enabledEvents: ['booking.created'], description: 'from GraphQL' } },
    );
    expect(create.body.errors, create.text).toBeUndefined();
    const created = create.body.data.createWebhookEndpoint;
    expect(created).toMatchObject({
      __typename: 'WebhookEndpointSecretPayload',
      secret: expect.stringMatching(SECRET),
      webhookEndpoint: { url: URL_OK, enabledEvents: ['booking.created'], status: 'ENABLED', description: 'from GraphQL' },
    });
    const id = created.webhookEndpoint.id;
    const rest = await v3(app, `/webhook_endpoints/${id}`, { key: reseller.key });
    expect(rest.body).toMatchObject({ id, url: URL_OK, enabled_events: ['booking.created'] });

    const read = await gql(
      app,
      reseller.key,
      `query($id: ID!) {
      webhookEndpoints(first: 5) { edges { node { ${ENDPOINT_FIELDS} } } pageInfo { hasNextPage } }
      webhookEndpoint(id: $id) { id }
      node(id: $id) { __typename id }
    }`,
      { id },
    );
    expect(read.body.errors, read.text).toBeUndefined();
    expect(read.body.data).toEqual({
      webhookEndpoints: { edges: [{ node: created.webhookEndpoint }], pageInfo: { hasNextPage: false } },
      webhookEndpoint: { id },
      node: { __typename: 'WebhookEndpoint', id },
    });
    const foreign = await gql(app, other.key, 'query($id: ID!) { webhookEndpoint(id: $id) { id } node(id: $id) { id } }', { id });
    expect(foreign.body).toEqual({ data: { webhookEndpoint: null, node: null } });

    const before = await dbState(app);
    const invalid = await gql(
      app,
      reseller.key,
      `mutation($input: CreateWebhookEndpointInput!) {
      createWebhookEndpoint(input: $input) { __typename ${ERRORS} } }`,
      { input: { url: URL_OK, enabledEvents: ['nope.nope'] } },
    );
    expect(invalid.body.data.createWebhookEndpoint).toMatchObject({
      __typename: 'InputError',
      code: 'validation_error',
      param: 'enabledEvents',
    });
    const badUrl = await gql(
      app,
      reseller.key,
      `mutation($input: CreateWebhookEndpointInput!) {
      createWebhookEndpoint(input: $input) { __typename ${ERRORS} } }`,
      { input: { url: 'mailto:a@b.c', enabledEvents: ['*'] } },
    );
    expect(badUrl.body.data.createWebhookEndpoint).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'url' });
    const notMine = await gql(
      app,
      other.key,
      `mutation($input: WebhookEndpointIdInput!) {
      rotateWebhookEndpointSecret(input: $input) { __typename ${ERRORS} }
      deleteWebhookEndpoint(input: $input) { __typename ${ERRORS} } }`,
      { input: { id } },
    );
    expect(notMine.body.data).toEqual({
      rotateWebhookEndpointSecret: { __typename: 'NotFoundError', code: 'resource_not_found', message: expect.any(String) },
      deleteWebhookEndpoint: { __typename: 'NotFoundError', code: 'resource_not_found', message: expect.any(String) },
    });
    await expectUnchanged(app, before);

    const rotated = await gql(
      app,
      reseller.key,
      `mutation($input: WebhookEndpointIdInput!) {
      rotateWebhookEndpointSecret(input: $input) { __typename ... on WebhookEndpointSecretPayload { secret webhookEndpoint { id } } ${ERRORS} } }`,
      { input: { id } },
    );
    expect(rotated.body.data.rotateWebhookEndpointSecret).toMatchObject({ secret: expect.stringMatching(SECRET), webhookEndpoint: { id } });
    expect(rotated.body.data.rotateWebhookEndpointSecret.secret).not.toBe(created.secret);

    const deleted = await gql(
      app,
      reseller.key,
      `mutation($input: WebhookEndpointIdInput!) {
      deleteWebhookEndpoint(input: $input) { __typename ... on DeletedWebhookEndpoint { id deleted } ${ERRORS} } }`,
      { input: { id } },
    );
    expect(deleted.body.data.deleteWebhookEndpoint).toEqual({ __typename: 'DeletedWebhookEndpoint', id, deleted: true });
    expectError(await v3(app, `/webhook_endpoints/${id}`, { key: reseller.key }), 404, 'resource_not_found');
  });

  it('events and event(id:), deliveries and retryWebhookDelivery', async () => {
    const receiver = await Receiver.start({ status: 503 });
    try {
      const reseller = await createReseller(app);
      const pass = await passFor(app, reseller);
      const endpoint = await createEndpoint(app, reseller, { url: receiver.url() });
      const { eventId } = await makeEvent(app, reseller, pass);
      await dispatch(app);

      const read = await gql(
        app,
        reseller.key,
        `query($id: ID!, $endpoint: ID!) {
        events(first: 5, type: "issued_pass.created") { edges { node { id type objectType requestId idempotencyKey json createdAt } } }
        event(id: $id) { id type }
        webhookEndpoint(id: $endpoint) { deliveries(first: 5) { edges { node {
          id eventType status attempts nextAttemptAt lastResponseStatus lastError event { id } } } } }
      }`,
        { id: eventId, endpoint: endpoint.id },
      );
      expect(read.body.errors, read.text).toBeUndefined();
      const [edge] = read.body.data.events.edges;
      const rest = await v3(app, `/events/${eventId}`, { key: reseller.key });
      expect(edge.node).toMatchObject({
        id: eventId,
        type: 'issued_pass.created',
        objectType: 'issued_pass',
        requestId: rest.body.request.id,
        idempotencyKey: null,
      });
      expect(JSON.parse(edge.node.json)).toEqual(rest.body);
      expect(read.body.data.event).toEqual({ id: eventId, type: 'issued_pass.created' });
      const [delivery] = read.body.data.webhookEndpoint.deliveries.edges.map((e: { node: unknown }) => e.node);
      expect(delivery).toMatchObject({
        id: expect.stringMatching(/^whd_/),
        eventType: 'issued_pass.created',
        status: 'PENDING',
        attempts: 1,
        lastResponseStatus: 503,
        lastError: 'HTTP 503',
        event: { id: eventId },
      });
      const listed = await v3(app, `/webhook_endpoints/${endpoint.id}/deliveries`, { key: reseller.key });
      expect(listed.body.data).toEqual([
        expect.objectContaining({ id: delivery.id, event_id: eventId, status: 'PENDING', attempts: 1, last_response_status: 503 }),
      ]);

      const badEvents = await gql(app, reseller.key, '{ events(type: "nope") { edges { node { id } } } }');
      expect(badEvents.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'type' });

      receiver.behaviour = { status: 204 };
      const retry = await gql(
        app,
        reseller.key,
        `mutation($input: RetryWebhookDeliveryInput!) {
        retryWebhookDelivery(input: $input) { __typename ... on WebhookDeliveryPayload { delivery { id status nextAttemptAt } } ${ERRORS} } }`,
        { input: { webhookEndpointId: endpoint.id, deliveryId: delivery.id } },
      );
      expect(retry.body.data.retryWebhookDelivery).toEqual({
        __typename: 'WebhookDeliveryPayload',
        delivery: { id: delivery.id, status: 'PENDING', nextAttemptAt: expect.any(String) },
      });
      expect(Math.floor(Date.parse(retry.body.data.retryWebhookDelivery.delivery.nextAttemptAt) / 1000)).toBe(
        Math.floor(app.clock.now().getTime() / 1000),
      );
      expect(await dispatch(app)).toBe(1); // due now: no need to wait the 5 s
      expect(await deliveriesOf(app, endpoint.id)).toEqual([
        expect.objectContaining({ status: 'SUCCEEDED', attempts: 2, last_response_status: 204, last_error: null }),
      ]);
    } finally {
      await receiver.down();
    }
  });
});
