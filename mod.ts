/**
 * magi-code: a coding-agent backend that GUI clients spawn as
 * `magi-code serve --stdio` and drive with the magi-code.local-agent protocol
 * (version 1) over stdin and stdout.
 *
 * Embedders and tests pass a {@link Runtime} in: `createServer(runtime)`.
 *
 * @module
 */

export { HELP, main, SERVED_STDIO } from "./src/cli.ts";
export { DiagnosticCode, ErrorCode } from "./src/protocol/errors.ts";
export { PROTOCOL, PROTOCOL_VERSION } from "./src/protocol/identity.ts";
export { LIMITS } from "./src/protocol/limits.ts";
export type { RunEvent } from "./src/runner/run-events.ts";
export type * from "./src/host/runtime.ts";
export { READ_BATCH_BYTES, RuntimeError, RuntimeErrorCode } from "./src/host/runtime.ts";
export { createServer, type Server } from "./src/server.ts";
export { VERSION } from "./src/util/version.ts";
