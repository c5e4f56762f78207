import { defineRoutes } from '../../rest/route.ts';

// The spa module's V3 operations (filled in by the catalogue work).
export const spaRoutes = defineRoutes([]);
