/**
 * What a client call can fail with, as three classes a caller can tell apart:
 * the server answered with a wire error code (the request was refused; the
 * connection is usable unless the code closes it), the server broke the
 * protocol (the client failed closed and the connection is gone), or the
 * connection ended before the answer came.
 *
 * @module
 */

import type { ErrorCode } from "../protocol/errors.ts";

/** The server answered a request with a wire error code. */
export class ProtocolError extends Error {
  /** The wire code, one of `ErrorCode`. */
  readonly code: ErrorCode;
  /** The method that was refused. */
  readonly method: string;

  /** Creates the error for `method` refused with `code`. */
  constructor(method: string, code: ErrorCode) {
    super(`${method}: ${code}`);
    this.name = "ProtocolError";
    this.code = code;
    this.method = method;
  }
}

/**
 * The server sent something this client cannot honour: a frame that is not
 * JSON, a foreign protocol or version, an unknown frame type, event name,
 * error code or enum value, a response to no request, an event outside its
 * run. The spec requires a client to fail closed on these, so the client
 * stops reading, closes the server's stdin and rejects everything pending.
 * Before `initialize` answered, a client that knows the child's exit
 * (`AgentClientOptions.exited`) first waits for it, as long as for an
 * ended output: a child that exits is a `SpawnError` (`exited`) instead,
 * most often a wrong command.
 */
export class ProtocolViolation extends Error {
  /**
   * The last bytes the child wrote to stderr, for a violation before
   * `initialize` answered (a wrong command that did not exit), when the
   * host keeps them; else "".
   */
  readonly stderr: string;

  /** Creates the violation; `message` says what was wrong, never the frame's content. */
  constructor(message: string, stderr = "") {
    super(`protocol violation: ${message}${stderr === "" ? "" : `; the child's stderr ended with:\n${stderr}`}`);
    this.name = "ProtocolViolation";
    this.stderr = stderr;
  }
}

/** The connection ended (EOF, a broken pipe, `close()`) before this request or run was answered. */
export class ConnectionClosed extends Error {
  /** Creates the error; `message` says why the connection ended. */
  constructor(message: string) {
    super(message);
    this.name = "ConnectionClosed";
  }
}

/** A request the client refused to send: the method was not advertised, or the id budget is spent. */
export class RequestRefused extends Error {
  /** The method that was not sent. */
  readonly method: string;

  /** Creates the error for `method`, saying why. */
  constructor(method: string, message: string) {
    super(`${method}: ${message}`);
    this.name = "RequestRefused";
    this.method = method;
  }
}

/** How an aborted request ended, as far as the client knows. */
export type AbortOutcome =
  /** Nothing ran: it was still queued, or the child refused it `busy` after the client's `operation.cancel` (it is never sent again). */
  | "not_sent"
  /** The child answered it `operation_cancelled` after the client's `operation.cancel`. */
  | "cancelled"
  /** It was sent and cannot be cancelled by id (or `operation.cancel` was not negotiated): the child may still act on it, and its response will be read and dropped. */
  | "discarded";

/** A request given up through its `signal` or `timeoutMs` (see {@link AbortOutcome}). */
export class RequestAborted extends Error {
  /** The method of the request. */
  readonly method: string;
  /** What became of the request. */
  readonly outcome: AbortOutcome;
  /** True when `timeoutMs` elapsed, false when the caller's signal aborted. */
  readonly timedOut: boolean;

  /** Creates the error; `cause` is the signal's reason (or the timeout's). */
  constructor(method: string, outcome: AbortOutcome, timedOut: boolean, cause: unknown) {
    const how = timedOut ? "timed out" : "aborted";
    const what = outcome === "not_sent"
      ? "before it ran"
      : outcome === "cancelled"
      ? "and the child cancelled it"
      : "after it was sent; it cannot be cancelled, so the child may still act on it and its response will be discarded";
    super(`${method}: ${how} ${what}`, { cause });
    this.name = "RequestAborted";
    this.method = method;
    this.outcome = outcome;
    this.timedOut = timedOut;
  }
}

/**
 * Why a child could not be started or served: the executable is missing
 * (`command_not_found`) or not executable (`permission_denied`), the
 * working directory is missing or not a directory (`cwd_invalid`), the
 * package's bin is not where the library looked (`bin_missing`: a bundler
 * moved the library away from it), the spawn failed otherwise
 * (`spawn_failed`), or the child exited before `initialize` answered
 * (`exited`, with its exit code and the tail of its stderr).
 */
export type SpawnFailure = "command_not_found" | "permission_denied" | "cwd_invalid" | "bin_missing" | "spawn_failed" | "exited";

/** What a {@link SpawnError} knows besides its reason. */
export interface SpawnErrorDetails {
  /** The system error code of a failed spawn (`ENOENT`, `EACCES`, …), else null. */
  readonly errno?: string | null;
  /** The exit code of a child that exited (null after a signal or when it never ran). */
  readonly exitCode?: number | null;
  /** The last bytes the child wrote to stderr, when they were kept; else "". */
  readonly stderr?: string;
}

/**
 * The child could not be started, or exited before `initialize` answered.
 * It is a {@link ConnectionClosed}: everything pending rejects with it.
 */
export class SpawnError extends ConnectionClosed {
  /** The cause, one of {@link SpawnFailure}. */
  readonly reason: SpawnFailure;
  /** See {@link SpawnErrorDetails.errno}. */
  readonly errno: string | null;
  /** See {@link SpawnErrorDetails.exitCode}. */
  readonly exitCode: number | null;
  /** See {@link SpawnErrorDetails.stderr}. */
  readonly stderr: string;

  /** Creates the error; `message` names the cause in words (the command, the directory, the exit code). */
  constructor(reason: SpawnFailure, message: string, details: SpawnErrorDetails = {}) {
    super(message);
    this.name = "SpawnError";
    this.reason = reason;
    this.errno = details.errno ?? null;
    this.exitCode = details.exitCode ?? null;
    this.stderr = details.stderr ?? "";
  }
}

/** Whether `error` is a wire error with `code`. */
export function isProtocolError(error: unknown, code?: ErrorCode): error is ProtocolError {
  return error instanceof ProtocolError && (code === undefined || error.code === code);
}
