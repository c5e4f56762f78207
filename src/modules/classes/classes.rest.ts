import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { nearFromQuery, nearQuerySchema } from '../../platform/geo.ts';
import { pageQuerySchema } from '../../platform/pagination.ts';
import { parseInput } from '../../platform/validation.ts';
import { getClassWithInstances, listClassCategories } from './classes.service.ts';
import { classFilterSchema, listClassListings } from './list-classes.ts';
import {
  classCategorySchema,
  classSchema,
  classWithInstancesSchema,
  presentClass,
  presentClassCategory,
  presentClassWithInstances,
} from './classes.presenter.ts';

const readErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const classesQuerySchema = pageQuerySchema.extend(nearQuerySchema.shape).extend(classFilterSchema.shape);

export const classesRoutes = defineRoutes([
  listRoute({
    path: '/class_categories',
    operationId: 'listClassCategories',
    tag: 'Classes',
    summary: 'Get the active class categories, newest first; a `name` is a value of the `category` filter of GET /classes',
    item: classCategorySchema,
    description: 'A list of `class_category` objects',
    errors: [...readErrors],
    url: () => '/v3/api/business/reseller/class_categories',
    message: 'Class categories retrieved successfully',
    list: listClassCategories,
    present: presentClassCategory,
  }),
  listRoute({
    path: '/classes',
    operationId: 'listClasses',
    tag: 'Classes',
    summary:
      'Get classes, newest first, or nearest first with `distance_km` when `lat` and `lon` are given. ' +
      '`category` is a category name (any case); `date` (YYYY-MM-DD) is local to each provider and keeps classes with a scheduled instance that day',
    query: classesQuerySchema,
    item: classSchema,
    description: 'A list of `class` objects',
    errors: [...readErrors],
    url: () => '/v3/api/business/reseller/classes',
    message: 'Classes retrieved successfully',
    list: (ctx, page, { query }) => {
      const near = nearFromQuery(query);
      const filters = parseInput(classFilterSchema, { category: query.category, date: query.date, provider_id: query.provider_id });
      return listClassListings(ctx, { category: filters.category, date: filters.date, providerId: filters.provider_id, near }, page);
    },
    present: presentClass,
  }),
  {
    method: 'GET',
    path: '/classes/{id}',
    operationId: 'getClass',
    tag: 'Classes',
    summary: 'Get a class with its next 50 upcoming scheduled instances (soonest first; `date` and `time` local to the provider)',
    success: { status: 200, description: 'A `class` with `instances`', schema: classWithInstancesSchema },
    errors: [...readErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentClassWithInstances(await getClassWithInstances(ctx, params.id)) };
    },
  },
]);
