// The resellers module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
export * from './resellers.service.ts';
export * from './cors-origins.ts';
