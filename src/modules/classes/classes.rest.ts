import { defineRoutes } from '../../rest/route.ts';

// The classes module's V3 operations (filled in by the catalogue work).
export const classesRoutes = defineRoutes([]);
