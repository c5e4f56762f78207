// The events module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
export * from './events.service.ts';
export { LiveEvents, EVENT_CHANNEL, type LiveEvent, type LiveFilter, type EventPosition } from './events.live.ts';
