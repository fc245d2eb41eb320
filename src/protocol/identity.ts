/**
 * The wire's identity constants and the identifier grammar shared by request
 * ids, method names and capability names.
 *
 * @module
 */

/** The protocol name every frame carries. */
export const PROTOCOL = "magi-code.local-agent";

/** The protocol version every frame carries. */
export const PROTOCOL_VERSION = 1;

/** 1–64 ASCII bytes from `[A-Za-z0-9._-]`: request ids, methods and capabilities. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Returns whether `value` is a string in the identifier grammar. */
export function isIdentifier(value: unknown): value is string {
  return typeof value === "string" && IDENTIFIER_PATTERN.test(value);
}
