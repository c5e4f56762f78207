// The client-sessions module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
export * from './client-sessions.service.ts';
export { createClientSession, createClientSessionInput, type CreateClientSessionInput } from './create-client-session.ts';
