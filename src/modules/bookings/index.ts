// The bookings module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
// Importing the module defines its event types' payloads with the events module (bookings.events.ts).
import './bookings.events.ts';
export * from './bookings.service.ts';
export { bookClass, type BookClassInput } from './book-class.ts';
export { bookSpa, type BookSpaInput } from './book-spa.ts';
export { confirmClassBooking, confirmSpaBooking } from './confirm-session.ts';
export type { Initiation } from './initiation.ts';
