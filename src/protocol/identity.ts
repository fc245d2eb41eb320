/**
 * The wire's identity constants and the one home of every id grammar: the
 * 64-byte identifier (request ids, methods, capabilities, backend-issued
 * opaque ids, provider names, error codes) and the session-id grammar that
 * doubles as a file name. Store and config import them from here, so a
 * name the wire accepts is always one the store can hold, and back.
 *
 * @module
 */

/** The protocol name every frame carries. */
export const PROTOCOL = "magi-code.local-agent";

/** The protocol version every frame carries. */
export const PROTOCOL_VERSION = 1;

/**
 * 1–64 ASCII bytes from `[A-Za-z0-9._-]` (64 is `LIMITS.identifier_bytes`):
 * request ids, methods, capabilities, the opaque ids the backend issues
 * (revisions, cursors) and short codes (stored error codes, provider codes).
 */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Session ids: 1–64 ASCII bytes of `[A-Za-z0-9_-]`. It is the identifier
 * grammar without `.`, so an id is a safe file-name stem (`<id>.jsonl`,
 * `<id>.<kind>.lease`): never `.`/`..`, never a second extension. Instance
 * ids, which name temporary files, keep the same grammar.
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Provider names in settings, credentials and stored preferences: the identifier grammar. */
export const PROVIDER_NAME_PATTERN: RegExp = IDENTIFIER_PATTERN;

/** Returns whether `value` is a string in the identifier grammar. */
export function isIdentifier(value: unknown): value is string {
  return typeof value === "string" && IDENTIFIER_PATTERN.test(value);
}
