/**
 * The reply port: how a worker answers the request it was given. Workers
 * never see the encoder or the writer, so a worker cannot emit a frame that
 * bypasses sequence numbering or the ordered writer's bounds.
 *
 * @module
 */

import type { ErrorCode } from "./errors.ts";
import type { OutputValue } from "./frames.ts";

/** Answers requests by id; each id is answered at most once by its worker. */
export interface WorkerReplies {
  /** Sends a success response. */
  result(id: string, result: OutputValue): void;
  /** Sends an error response: the code only, never submitted text. */
  error(id: string, code: ErrorCode): void;
}
