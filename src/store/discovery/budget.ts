/**
 * The read work one `session.list` request may do, counted as the spec
 * counts it: bytes and lines read across every session file of the request
 * (`discovery_scan_bytes`, `discovery_scan_lines`), at most
 * `discovery_session_bytes` / `discovery_session_lines` of them for any one
 * file, and a cooperative `discovery_scan_ms` deadline. Limits apply per
 * request, not per page: a continuation rescans and is charged afresh.
 *
 * A successful read is charged what it read. A failed read has no
 * trustworthy account of what it consumed, so it is charged the whole
 * budget it was admitted with; a file refused on its `lstat` alone was never
 * opened and costs nothing.
 *
 * @module
 */

import { LIMITS } from "../../protocol/limits.ts";

/** The bounds one file read is admitted with. */
export interface FileAdmission {
  /** Most bytes the read may take (`maxBytes` of the safe reader). */
  readonly maxBytes: number;
  /** Most LF-terminated lines it may take. */
  readonly maxLines: number;
}

/** What is left of one request's read work and time. */
export class ScanBudget {
  readonly #now: () => number;
  readonly #started: number;
  #bytes: number = LIMITS.discovery_scan_bytes;
  #lines: number = LIMITS.discovery_scan_lines;

  /** Starts the budget and the deadline now, by the monotonic clock `now`. */
  constructor(now: () => number) {
    this.#now = now;
    this.#started = now();
  }

  /** The bounds of the next file read: the per-file budget, or what is left of the request's if less. */
  admit(): FileAdmission {
    return {
      maxBytes: Math.min(LIMITS.discovery_session_bytes, this.#bytes),
      maxLines: Math.min(LIMITS.discovery_session_lines, this.#lines),
    };
  }

  /** Charges a read of `bytes` bytes and `lines` lines (a failed read: its whole {@link admit}ted budget). */
  charge(bytes: number, lines: number): void {
    this.#bytes -= bytes;
    this.#lines -= lines;
  }

  /** Whether more than `discovery_scan_ms` passed since the request began. */
  expired(): boolean {
    return this.#now() - this.#started > LIMITS.discovery_scan_ms;
  }
}
