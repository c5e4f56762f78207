import { defineEvents } from '../events/index.ts';
import { issuedPassSchema, passRenewalSchema, presentIssuedPass, presentRenewal } from './passes.presenter.ts';

// The passes module's event types: its use cases pass the issued pass with its package (or the
// renewal), and the events module builds `data.object` with these presenters (src/modules/events/events.payloads.ts).

const issuedPass = { schema: issuedPassSchema, present: presentIssuedPass };
const passEvents = {
  'issued_pass.created': issuedPass,
  'issued_pass.updated': issuedPass,
  'issued_pass.renewed': { schema: passRenewalSchema, present: presentRenewal },
  'issued_pass.expired': issuedPass,
};

declare module '../events/index.ts' {
  interface EventPayloads extends PassEvents {}
}
type PassEvents = typeof passEvents;

/** recordEvent for the passes module's types. */
export const recordPassEvent = defineEvents(passEvents);
