// The lookups module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
// Importing the module defines its event types' payloads with the events module (lookups.events.ts).
import './lookups.events.ts';
export * from './lookups.service.ts';
