// The access-codes module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
// Importing the module defines its event types' payloads with the events module (access-codes.events.ts).
import './access-codes.events.ts';
export * from './access-codes.service.ts';
