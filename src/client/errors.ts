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
 */
export class ProtocolViolation extends Error {
  /** Creates the violation; `message` says what was wrong, never the frame's content. */
  constructor(message: string) {
    super(`protocol violation: ${message}`);
    this.name = "ProtocolViolation";
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
