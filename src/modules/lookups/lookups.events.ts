import { defineEvents } from '../events/index.ts';
import { lookupSchema, presentLookup } from './lookups.presenter.ts';

// The lookups module's event type: verifying passes the lookup as read, and the events module
// builds `data.object` with its presenter (src/modules/events/events.payloads.ts).

const lookupEvents = {
  'lookup.verified': { schema: lookupSchema, present: presentLookup },
};

declare module '../events/index.ts' {
  interface EventPayloads extends LookupEvents {}
}
type LookupEvents = typeof lookupEvents;

/** recordEvent for the lookups module's type. */
export const recordLookupEvent = defineEvents(lookupEvents);
