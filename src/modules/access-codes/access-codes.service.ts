import type { presentAccessCode } from './access-codes.presenter.ts';

// Other modules reach access codes only through this file (docs/architecture.md "Module boundaries"):
// the expiry sweep for `serve`, `worker` and the CLI, and the payload of the access_code.* events.
export { expireAccessCodes } from './expire-access-codes.ts';
/** The `data.object` of access_code.* events: the code without its secret (no code, no QR). */
export type AccessCodeObject = ReturnType<typeof presentAccessCode>;
// The use cases, for other modules that act on a client's behalf (the hosted page, docs/partner-guide.md "Hosted sessions").
export { createAccessCode, type AccessCodeCreation } from './create-access-code.ts';
export { confirmAccessCodeSession } from './confirm-access-code.ts';
