// The booking use cases, for other modules that book on a client's behalf (the hosted page, docs/partner-guide.md
// "Hosted sessions"). A file of its own beside bookings.service.ts, which the use cases import.
export { bookClass, type BookClassInput } from './book-class.ts';
export { bookSpa, type BookSpaInput } from './book-spa.ts';
export { confirmClassBooking, confirmSpaBooking } from './confirm-session.ts';
export type { Initiation } from './bookings.presenter.ts';
