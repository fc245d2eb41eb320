/**
 * The read work one `session.list` request may do, counted as the spec
 * counts it: bytes and lines read across every session file of the request
 * (`discovery_scan_bytes`, `discovery_scan_lines`), at most
 * `discovery_session_bytes` / `discovery_session_lines` of them for any one
 * file, and a cooperative `discovery_scan_ms` deadline. Limits apply per
 * request, not per page: a continuation rescans and is charged afresh.
 * `session.discover` charges each page the same way under its own
 * `discover_*` bounds ({@link DISCOVER_BOUNDS}).
 *
 * A read is charged the bytes and lines it took from the file, failed or
 * not: the safe reader counts a malformed file to its end, and a file that
 * failed to open, or was refused on its size or its `lstat` alone, took
 * nothing. Only a read a platform failure cut short has no trustworthy
 * account of what it consumed, so it is charged the whole budget it was
 * admitted with, as the spec asks.
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

/** The bounds a budget enforces: per file, per request (or page), and the cooperative deadline. */
export interface ReadBounds {
  readonly sessionBytes: number;
  readonly sessionLines: number;
  readonly scanBytes: number;
  readonly scanLines: number;
  readonly scanMs: number;
}

/** `session.list`'s bounds, per request. */
export const LIST_BOUNDS: ReadBounds = {
  sessionBytes: LIMITS.discovery_session_bytes,
  sessionLines: LIMITS.discovery_session_lines,
  scanBytes: LIMITS.discovery_scan_bytes,
  scanLines: LIMITS.discovery_scan_lines,
  scanMs: LIMITS.discovery_scan_ms,
};

/** `session.discover`'s bounds, per page. */
export const DISCOVER_BOUNDS: ReadBounds = {
  sessionBytes: LIMITS.discover_session_bytes,
  sessionLines: LIMITS.discover_session_lines,
  scanBytes: LIMITS.discover_page_scan_bytes,
  scanLines: LIMITS.discover_page_scan_lines,
  scanMs: LIMITS.discover_page_ms,
};

/** What is left of one request's read work and time. */
export class ScanBudget {
  readonly #now: () => number;
  readonly #started: number;
  readonly #bounds: ReadBounds;
  #bytes: number;
  #lines: number;

  /** Starts the budget of `bounds` and its deadline now, by the monotonic clock `now`. */
  constructor(now: () => number, bounds: ReadBounds = LIST_BOUNDS) {
    this.#now = now;
    this.#started = now();
    this.#bounds = bounds;
    this.#bytes = bounds.scanBytes;
    this.#lines = bounds.scanLines;
  }

  /** The bounds of the next file read: the per-file budget, or what is left of the request's if less. */
  admit(): FileAdmission {
    return {
      maxBytes: Math.min(this.#bounds.sessionBytes, this.#bytes),
      maxLines: Math.min(this.#bounds.sessionLines, this.#lines),
    };
  }

  /**
   * The least {@link admit} can give the file after the next one, however
   * the next one is charged (never more than it was admitted): what may be
   * read ahead for that file while the next one is examined.
   */
  afterNext(): number {
    return Math.min(this.#bounds.sessionBytes, this.#bytes - this.admit().maxBytes);
  }

  /** Whether what is left still admits a whole per-file budget (a `session.discover` page stops before it does not). */
  whole(): boolean {
    return this.#bytes >= this.#bounds.sessionBytes && this.#lines >= this.#bounds.sessionLines;
  }

  /** Charges a read of `bytes` bytes and `lines` lines (one whose account is unknown: its whole {@link admit}ted budget). */
  charge(bytes: number, lines: number): void {
    this.#bytes -= bytes;
    this.#lines -= lines;
  }

  /** Whether more than the deadline (`discovery_scan_ms`, `discover_page_ms`) passed since the request began. */
  expired(): boolean {
    return this.#now() - this.#started > this.#bounds.scanMs;
  }
}
