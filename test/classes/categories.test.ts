import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClassCategory } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// GET /class_categories and Query.classCategories: the active categories, newest first. This file's
// database holds only the categories created here, so whole lists can be asserted.

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;
let yoga: { id: string }, spinning: { id: string }, pilates: { id: string }, retired: { id: string };

beforeAll(async () => {
  reseller = await createReseller(app);
  yoga = await createClassCategory(app, { name: 'Yoga', description: 'Stretch and breathe' });
  retired = await createClassCategory(app, { name: 'Jazzercise', description: 'Gone', active: false });
  spinning = await createClassCategory(app, { name: 'Spinning', description: 'Ride indoors' });
  pilates = await createClassCategory(app, { name: 'Pilates', description: 'Core strength' });
});

describe('GET /class_categories', () => {
  it('lists the active categories newest first as class_category objects', async () => {
    const res = await v3(app, '/class_categories', { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        { object: 'class_category', id: pilates.id, name: 'Pilates', description: 'Core strength' },
        { object: 'class_category', id: spinning.id, name: 'Spinning', description: 'Ride indoors' },
        { object: 'class_category', id: yoga.id, name: 'Yoga', description: 'Stretch and breathe' },
      ],
      has_more: false,
      url: '/v3/api/business/reseller/class_categories',
      message: 'Class categories retrieved successfully',
    });
    expect(JSON.stringify(res.body)).not.toContain(retired.id);
  });

  it('pages with limit, starting_after and ending_before', async () => {
    const first = await v3(app, '/class_categories?limit=2', { key: reseller.key });
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([pilates.id, spinning.id]);
    expect(first.body.has_more).toBe(true);
    const next = await v3(app, `/class_categories?limit=2&starting_after=${spinning.id}`, { key: reseller.key });
    expect(next.body.data.map((c: { id: string }) => c.id)).toEqual([yoga.id]);
    expect(next.body.has_more).toBe(false);
    const back = await v3(app, `/class_categories?limit=1&ending_before=${yoga.id}`, { key: reseller.key });
    expect(back.body.data.map((c: { id: string }) => c.id)).toEqual([spinning.id]);
    expect(back.body.has_more).toBe(true);
  });

  it('an inactive category is not a cursor of this list › 400 invalid_cursor', async () => {
    const res = await v3(app, `/class_categories?starting_after=${retired.id}`, { key: reseller.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    [`starting_after=x&ending_before=y`, 'ending_before'],
    ['category=Yoga', 'category'],
  ])('?%s › 400 validation_error on %s', async (query, param) => {
    const res = await v3(app, `/class_categories?${query}`, { key: reseller.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param });
  });

  it('without an API key › 401 invalid_api_key', async () => {
    const res = await v3(app, '/class_categories');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });
});

describe('Query.classCategories', () => {
  it('is the same list as a connection, and every category is a node', async () => {
    const res = await gql(
      app,
      reseller.key,
      `{
      classCategories(first: 2) { edges { cursor node { id name description } } pageInfo { hasNextPage endCursor } }
      node(id: "${yoga.id}") { __typename id ... on ClassCategory { name } }
    }`,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.classCategories).toEqual({
      edges: [
        { cursor: pilates.id, node: { id: pilates.id, name: 'Pilates', description: 'Core strength' } },
        { cursor: spinning.id, node: { id: spinning.id, name: 'Spinning', description: 'Ride indoors' } },
      ],
      pageInfo: { hasNextPage: true, endCursor: spinning.id },
    });
    expect(res.body.data.node).toEqual({ __typename: 'ClassCategory', id: yoga.id, name: 'Yoga' });
  });

  it('without an API key › is refused', async () => {
    const res = await gql(app, undefined, '{ classCategories { edges { node { id } } } }');
    expect(res.status).toBe(401);
    expect(res.body.data ?? null).toBeNull();
  });
});
