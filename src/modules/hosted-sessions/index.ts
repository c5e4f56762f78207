// The hosted-sessions module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
// Importing the module defines its event types' payloads with the events module (hosted-sessions.events.ts).
import './hosted-sessions.events.ts';
export * from './hosted-sessions.service.ts';
