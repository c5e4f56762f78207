import { defineEvents } from '../events/index.ts';
import { creditPurchaseSchema, presentCreditPurchase } from './credits.presenter.ts';

// The credits module's event type: the purchase use case passes the purchase, and the events module
// builds `data.object` with its presenter (src/modules/events/events.payloads.ts).

const creditEvents = {
  'credits.purchased': { schema: creditPurchaseSchema, present: presentCreditPurchase },
};

declare module '../events/index.ts' {
  interface EventPayloads extends CreditEvents {}
}
type CreditEvents = typeof creditEvents;

/** recordEvent for the credits module's type. */
export const recordCreditEvent = defineEvents(creditEvents);
