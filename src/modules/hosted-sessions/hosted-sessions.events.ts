import { defineEvents } from '../events/index.ts';
import { hostedSessionSchema, presentHostedSession } from './hosted-sessions.presenter.ts';

// The hosted-sessions module's event types: its use cases pass the session, and the events module
// builds `data.object` with its presenter (src/modules/events/events.payloads.ts).

const hostedSession = { schema: hostedSessionSchema, present: presentHostedSession };
const hostedSessionEvents = {
  'hosted_session.completed': hostedSession,
  'hosted_session.expired': hostedSession,
};

declare module '../events/index.ts' {
  interface EventPayloads extends HostedSessionEvents {}
}
type HostedSessionEvents = typeof hostedSessionEvents;

/** recordEvent for the hosted-sessions module's types. */
export const recordHostedSessionEvent = defineEvents(hostedSessionEvents);
