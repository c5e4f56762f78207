import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ClassCategorySchema = defineEntity({
  name: 'ClassCategory',
  tableName: 'class_category',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    description: p.string(),
    active: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type ClassCategory = InferEntity<typeof ClassCategorySchema>;

export const ClassSchema = defineEntity({
  name: 'Class',
  tableName: 'class',
  properties: {
    id: p.string().primary(),
    providerId: p.string(),
    categoryId: p.string(),
    name: p.string(),
    description: p.string(),
    durationMinutes: p.integer(),
    createdAt: p.datetime(),
  },
});
export type Class = InferEntity<typeof ClassSchema>;

export const classInstanceStatuses = ['SCHEDULED', 'CANCELLED'] as const;

export const ClassInstanceSchema = defineEntity({
  name: 'ClassInstance',
  tableName: 'class_instance',
  properties: {
    id: p.string().primary(),
    classId: p.string(),
    startsAt: p.datetime(),
    // The start's calendar date in the provider's zone (kept for the `date` filter).
    localDate: p.string().columnType('date'),
    capacity: p.integer(),
    // Spots held by bookings; changed under a row lock together with the booking.
    spotsTaken: p.integer(),
    status: p.enum(classInstanceStatuses),
    createdAt: p.datetime(),
  },
});
export type ClassInstance = InferEntity<typeof ClassInstanceSchema>;
