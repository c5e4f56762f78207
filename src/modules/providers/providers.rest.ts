import { defineRoutes } from '../../rest/route.ts';

// The providers module's V3 operations (filled in by the catalogue work).
export const providersRoutes = defineRoutes([]);
