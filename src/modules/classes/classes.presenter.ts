import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { kilometres } from '../../platform/geo.ts';
import { localTimeOf } from '../../platform/time.ts';
import type { Provider } from '../providers/index.ts';
import { classInstanceStatuses, type ClassCategory, type ClassInstance } from './classes.entity.ts';
import { spotsRemaining, UPCOMING_INSTANCES_SHOWN, type ClassListing } from './classes.service.ts';

// V3 presenters (docs/openapi.json documents them): allow-lists from rows to the wire. Each returns z.infer of its
// schema, which the OpenAPI document publishes (docs/openapi.json).

export const classCategorySchema = z
  .object({
    object: z.literal('class_category').describe('Always `class_category`'),
    id: z.string().describe('Class category id'),
    name: z.string().describe('Category name (Yoga, Spinning …); a value of the `category` filter of GET /classes'),
    description: z.string().describe('Description of the category'),
  })
  .meta({ id: 'ClassCategory', description: 'A kind of class' });
export type ClassCategoryResource = z.infer<typeof classCategorySchema>;

const classFields = {
  object: z.literal('class').describe('Always `class`'),
  id: z.string().describe('Class id'),
  name: z.string().describe('Class name'),
  description: z.string().describe('Description of the class'),
  category: z.string().describe('Name of its class category'),
  provider_id: z.string().describe('Id of the provider holding the class'),
  provider_name: z.string().describe('Name of the provider holding the class'),
  tier: z.string().describe("The provider's tier label"),
  duration_minutes: z.int().min(1).describe('Length of the class in minutes'),
  distance_km: z
    .number()
    .min(0)
    .optional()
    .describe('Kilometres from `lat`+`lon` of the query, to the metre; only in a search near a point'),
};

export const classSchema = z
  .object(classFields)
  .meta({ id: 'Class', description: 'A group fitness class at a provider; it is held at its instances' });
export type ClassResource = z.infer<typeof classSchema>;

export const classInstanceSchema = z
  .object({
    object: z.literal('class_instance').describe('Always `class_instance`'),
    id: z.string().describe('Class instance id'),
    starts_at: z.int().min(0).describe('The start, Unix seconds'),
    date: z.string().describe('Local date of the start at the provider, YYYY-MM-DD'),
    time: z.string().describe('Local wall-clock time of the start at the provider, HH:MM'),
    capacity: z.int().min(0).describe('Spots in the class'),
    spots_remaining: z.int().min(0).describe('Spots not yet booked'),
    status: z.enum(classInstanceStatuses).describe('SCHEDULED or CANCELLED'),
  })
  .meta({ id: 'ClassInstance', description: 'One scheduled occurrence of a class' });
export type ClassInstanceResource = z.infer<typeof classInstanceSchema>;

export const classWithInstancesSchema = z
  .object({
    ...classFields,
    instances: z.array(classInstanceSchema).describe(`The next ${UPCOMING_INSTANCES_SHOWN} upcoming scheduled instances, soonest first`),
  })
  .meta({ id: 'ClassWithInstances', description: 'A class with its upcoming instances' });
export type ClassWithInstancesResource = z.infer<typeof classWithInstancesSchema>;

export function presentClassCategory(category: ClassCategory): ClassCategoryResource {
  return {
    object: 'class_category',
    id: category.id,
    name: category.name,
    description: category.description,
  };
}

export function presentClass(listing: ClassListing): ClassResource {
  const { cls, provider, category, distanceM } = listing;
  return {
    object: 'class',
    id: cls.id,
    name: cls.name,
    description: cls.description,
    category: category.name,
    provider_id: provider.id,
    provider_name: provider.name,
    tier: provider.tier,
    duration_minutes: cls.durationMinutes,
    ...(distanceM !== undefined ? { distance_km: kilometres(distanceM) } : {}),
  };
}

/** `date` and `time` are wall-clock at the provider; `starts_at` is the instant. */
export function presentClassInstance(instance: ClassInstance, provider: Provider): ClassInstanceResource {
  return {
    object: 'class_instance',
    id: instance.id,
    starts_at: unixSeconds(instance.startsAt),
    date: instance.localDate,
    time: localTimeOf(instance.startsAt, provider.timezone),
    capacity: instance.capacity,
    spots_remaining: spotsRemaining(instance),
    status: instance.status,
  };
}

export function presentClassWithInstances(listing: ClassListing & { instances: ClassInstance[] }): ClassWithInstancesResource {
  return {
    ...presentClass(listing),
    instances: listing.instances.map((i) => presentClassInstance(i, listing.provider)),
  };
}
