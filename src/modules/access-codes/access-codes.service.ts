// Other modules reach access codes only through this file (docs/architecture.md "Module boundaries"):
// the expiry sweep for `serve`, `worker` and the CLI.
export { expireAccessCodes } from './expire-access-codes.ts';
// The use cases, for other modules that act on a client's behalf (the hosted page, docs/partner-guide.md "Hosted sessions").
export { createAccessCode, type AccessCodeCreation } from './create-access-code.ts';
export { confirmAccessCodeSession } from './confirm-access-code.ts';
