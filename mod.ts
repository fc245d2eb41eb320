/**
 * magi-code: a coding-agent backend that GUI clients spawn as
 * `magi-code serve --stdio` and drive with the magi-code.local-agent protocol
 * (version 1) over stdin and stdout.
 *
 * Embedders and tests pass a {@link Runtime} in: `createServer(runtime)`.
 * Client authors use {@link AgentClient} (web streams, any runtime) and the
 * wire types and schemas below; on Node, `magi-code/client` also exports
 * `spawnAgent()` and `binPath`.
 *
 * @module
 */

export * from "./src/client/mod.ts";
export { HELP, main, SERVED_STDIO } from "./src/cli.ts";
export type { RunEvent } from "./src/runner/run-events.ts";
export type * from "./src/host/runtime.ts";
export { READ_BATCH_BYTES, RuntimeError, RuntimeErrorCode } from "./src/host/runtime.ts";
export { createServer, type Server } from "./src/server.ts";
export { VERSION } from "./src/util/version.ts";
