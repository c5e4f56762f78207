// The passes module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
// Importing the module defines its event types' payloads with the events module (passes.events.ts).
import './passes.events.ts';
export * from './expiry.service.ts';
export * from './passes.service.ts';
export { issuePass, issuePassInput, type IssuePassInput } from './issue-pass.ts';
