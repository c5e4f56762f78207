import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import {
  createClass,
  createClassCategory,
  createClassInstance,
  createCopayOption,
  createProvider,
  createSpaService,
} from '../support/catalog.ts';
import { createPassPackage, createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// A cursor that is not an id of the list is 400 `invalid_cursor` naming the argument it was sent
// in (docs/errors.md): `after`/`before` in GraphQL, `starting_after`/`ending_before` in REST.
const app = useApp();

let reseller: TestReseller;
let passId: string;
let gym: string;
let spa: string;
let gymClass: string;
beforeAll(async () => {
  reseller = await createReseller(app);
  passId = (await createPassPackage(app, reseller)).id;
  gym = (await createProvider(app, { category: 'GYM', tier: 'SILVER' })).id;
  spa = (await createProvider(app, { category: 'SPA', tier: 'SILVER', lat: 52.53 })).id;
  const category = await createClassCategory(app);
  gymClass = (await createClass(app, gym, category.id)).id;
  await createClass(app, spa, category.id);
  await createClassInstance(app, gymClass, new Date(app.clock.now().getTime() + 86_400_000));
  await createCopayOption(app, gym);
  await createSpaService(app, spa);
});

const NEAR = 'near: { lat: 52.52, lon: 13.405 }';
const EDGES = '{ edges { cursor } }';

/** Every error is invalid_cursor naming `param`, and there is at least one. */
function expectInvalidCursor(res: { text: string; body: { errors?: { extensions?: Record<string, unknown> }[] } }, param: string) {
  expect(res.body.errors?.length, res.text).toBeGreaterThan(0);
  for (const error of res.body.errors ?? []) expect(error.extensions, res.text).toMatchObject({ code: 'invalid_cursor', param });
}

describe('GraphQL: a bad cursor names after/before', () => {
  const topLevel = [
    ['passes forward', `passes(first: 2, after: "bogus") ${EDGES}`, 'after'],
    ['passes backward', `passes(last: 2, before: "bogus") ${EDGES}`, 'before'],
    ['providers', `providers(first: 2, after: "bogus") ${EDGES}`, 'after'],
    ['providers near, forward', `providers(${NEAR}, first: 2, after: "bogus") ${EDGES}`, 'after'],
    ['providers near, backward', `providers(${NEAR}, last: 2, before: "bogus") ${EDGES}`, 'before'],
    ['classes', `classes(after: "bogus") ${EDGES}`, 'after'],
    ['classes near, backward', `classes(${NEAR}, last: 1, before: "bogus") ${EDGES}`, 'before'],
    ['classCategories, before alone', `classCategories(before: "bogus") ${EDGES}`, 'before'],
  ] as const;
  for (const [what, field, param] of topLevel) {
    it(`${what}: ${param}`, async () => expectInvalidCursor(await gql(app, reseller.key, `{ ${field} }`), param));
  }

  const perParent = [
    ['Provider.classes', `providers(first: 10) { edges { node { classes(first: 1, after: "bogus") ${EDGES} } } }`, 'after'],
    ['Class.instances', `classes(first: 10) { edges { node { instances(last: 1, before: "bogus") ${EDGES} } } }`, 'before'],
    ['Provider.services', `providers(first: 10) { edges { node { services(after: "bogus") ${EDGES} } } }`, 'after'],
    ['Provider.copayOptions', `providers(first: 10) { edges { node { copayOptions(before: "bogus") ${EDGES} } } }`, 'before'],
    ['Pass.providers', `passes(first: 5) { edges { node { providers(first: 1, after: "bogus") ${EDGES} } } }`, 'after'],
    [
      'Pass.providers near, backward',
      `passes(first: 5) { edges { node { providers(${NEAR}, last: 1, before: "bogus") ${EDGES} } } }`,
      'before',
    ],
  ] as const;
  for (const [what, field, param] of perParent) {
    it(`${what}: ${param}`, async () => expectInvalidCursor(await gql(app, reseller.key, `{ ${field} }`), param));
  }

  it("Provider.classes: another provider's class is no cursor of this provider's list", async () => {
    const res = await gql(
      app,
      reseller.key,
      `{ providers(first: 10) { edges { node { id classes(first: 1, after: "${gymClass}") ${EDGES} } } } }`,
    );
    expectInvalidCursor(res, 'after');
    // Only the spa's connection failed: for the gym it is a real cursor (an empty page after its only class).
    expect(res.body.errors, res.text).toHaveLength(1);
  });
});

describe('REST: a bad cursor names starting_after/ending_before', () => {
  const near = 'lat=52.52&lon=13.405';
  const lists = () =>
    [
      [`/passes?starting_after=bogus`, 'starting_after'],
      [`/passes?ending_before=bogus`, 'ending_before'],
      [`/providers?starting_after=bogus`, 'starting_after'],
      [`/providers?${near}&ending_before=bogus`, 'ending_before'],
      [`/classes?${near}&starting_after=bogus`, 'starting_after'],
      [`/class_categories?ending_before=bogus`, 'ending_before'],
      [`/passes/${passId}/providers?starting_after=bogus`, 'starting_after'],
      [`/passes/${passId}/providers?${near}&ending_before=bogus`, 'ending_before'],
      [`/providers/${gym}/gym-copay-options?ending_before=bogus`, 'ending_before'],
      [`/spas/${spa}/services?starting_after=bogus`, 'starting_after'],
    ] as const;

  it('every paginated list', async () => {
    for (const [path, param] of lists()) {
      const res = await v3(app, path, { key: reseller.key });
      expect
        .soft({ status: res.status, code: res.body?.error?.code, param: res.body?.error?.param }, `${path} → ${res.text}`)
        .toEqual({ status: 400, code: 'invalid_cursor', param });
    }
  });
});
