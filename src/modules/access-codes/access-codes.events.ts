import { defineEvents } from '../events/index.ts';
import { accessCodeSchema, presentAccessCode } from './access-codes.presenter.ts';

// The access-codes module's event types: its use cases pass the access code, and the events module
// builds `data.object` with its presenter (src/modules/events/events.payloads.ts).

const accessCode = { schema: accessCodeSchema, present: presentAccessCode };
const accessCodeEvents = {
  'access_code.created': accessCode,
  'access_code.redeemed': accessCode,
};

declare module '../events/index.ts' {
  interface EventPayloads extends AccessCodeEvents {}
}
type AccessCodeEvents = typeof accessCodeEvents;

/** recordEvent for the access-codes module's types. */
export const recordAccessCodeEvent = defineEvents(accessCodeEvents);
