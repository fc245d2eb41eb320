/**
 * A tiny HTTP listener on the loopback interface: the contract's only server
 * side, for the one command that needs it (`magi-code mcp login`, whose
 * OAuth redirect comes back to `http://127.0.0.1:<port>/…`). It answers GET
 * requests with a plain-text page; nothing else is served.
 *
 * @module
 */

/** The answer to one request: a status and a short plain-text page. */
export interface LoopbackReply {
  readonly status: number;
  readonly body: string;
}

/** Called with each request's method and target (path and query, as sent). */
export type LoopbackHandler = (method: string, target: string) => LoopbackReply;

/** A listening loopback server. */
export interface LoopbackListener {
  /** The port the system chose on 127.0.0.1. */
  readonly port: number;
  /** Stops listening and ends open connections; idempotent. */
  close(): Promise<void>;
}
