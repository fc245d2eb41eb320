/**
 * What the strict frame parser produces: values whose objects are
 * null-prototype records, and the duplicate-key facts the envelope needs to
 * decide between `invalid_request` and a recoverable id.
 *
 * @module
 */

import type { ErrorCode } from "./errors.ts";

/** A parsed JSON value; objects are null-prototype records so "__proto__" is plain data. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A parsed JSON object: a null-prototype record, so every key is an own data property. */
export interface JsonObject { [key: string]: JsonValue }

/**
 * A duplicate key: the first one in document order at the root object if there
 * is one there, else the first one found anywhere. The path leads from the
 * root to the object holding it.
 */
export interface DuplicateKey {
  /** Object keys and array indices from the root value down to the object holding the duplicate. */
  readonly path: readonly (string | number)[];
  /** The decoded duplicate key. */
  readonly key: string;
}

/**
 * The outcome of parsing one frame. On success, `duplicate` is the
 * {@link DuplicateKey} to report (the first value of a duplicated key is kept) or null.
 * `invalid_frame` means the nesting bound was exceeded; `invalid_request` means
 * anything else (UTF-8, syntax, lone surrogates, overflowing numbers).
 */
export type ParseResult =
  | {
    readonly ok: true;
    readonly value: JsonValue;
    readonly duplicate: DuplicateKey | null;
    /** Every key duplicated in the root object, in document order (so "is `id` ambiguous?" has an answer). */
    readonly rootDuplicates: readonly string[];
  }
  | { readonly ok: false; readonly code: typeof ErrorCode.invalidFrame | typeof ErrorCode.invalidRequest };
