import { listEnvelope, listOf } from '../../rest/envelope.ts';
import { defineRoutes } from '../../rest/route.ts';
import { nearFromQuery, nearQuerySchema } from '../../platform/geo.ts';
import { pageArgsFromQuery, pageQuerySchema } from '../../platform/pagination.ts';
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
  {
    method: 'GET',
    path: '/class_categories',
    operationId: 'listClassCategories',
    tag: 'Classes',
    paginated: true,
    summary: 'Get the active class categories, newest first; a `name` is a value of the `category` filter of GET /classes',
    query: pageQuerySchema,
    success: { status: 200, description: 'A list of `class_category` objects', schema: listOf(classCategorySchema) },
    errors: [...readErrors, 'invalid_cursor'],
    async handler(ctx, { query }) {
      const page = await listClassCategories(ctx, pageArgsFromQuery(query));
      return {
        status: 200,
        body: listEnvelope(
          page,
          '/v3/api/business/reseller/class_categories',
          'Class categories retrieved successfully',
          presentClassCategory,
        ),
      };
    },
  },
  {
    method: 'GET',
    path: '/classes',
    operationId: 'listClasses',
    tag: 'Classes',
    paginated: true,
    summary:
      'Get classes, newest first, or nearest first with `distance_km` when `lat` and `lon` are given. ' +
      '`category` is a category name (any case); `date` (YYYY-MM-DD) is local to each provider and keeps classes with a scheduled instance that day',
    query: classesQuerySchema,
    success: { status: 200, description: 'A list of `class` objects', schema: listOf(classSchema) },
    errors: [...readErrors, 'invalid_cursor'],
    async handler(ctx, { query }) {
      const page = pageArgsFromQuery(query);
      const near = nearFromQuery(query);
      const filters = parseInput(classFilterSchema, { category: query.category, date: query.date, provider_id: query.provider_id });
      const result = await listClassListings(
        ctx,
        { category: filters.category, date: filters.date, providerId: filters.provider_id, near },
        page,
      );
      return {
        status: 200,
        body: listEnvelope(result, '/v3/api/business/reseller/classes', 'Classes retrieved successfully', presentClass),
      };
    },
  },
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
