/**
 * Reads one stored line of a primary history as a record
 * (`docs/storage.md#records`): one this version understands, checked by its
 * schema, or one a later writer marked ignorable, skipped.
 *
 * Stored lines are our own earlier output, not wire input, so `JSON.parse` is
 * acceptable here; what the schemas add is that a broken line is refused as a
 * whole instead of being half understood.
 *
 * @module
 */

import * as v from "valibot";
import { NESTED_RECORD_BYTES, nestingWithinBounds, othersIgnorable, RECORD_NESTING_DEPTH, type SkippedRecord, skippedRecord } from "./record-evolution.ts";
import { containersWithin, nestingDepth, utf8BytesWithin } from "./record-fields.ts";
import { schemasOf, type SessionRecord } from "./records.ts";

export type { SkippedRecord } from "./record-evolution.ts";

/** A stored line as the reader takes it: a record this version understands, or one it skips. */
export type ReadRecord = SessionRecord | SkippedRecord;

/** The outcome of {@link parseRecordLine}; a refusal carries no detail, it is always `session_invalid` upstream. */
export type ParsedRecord = { readonly ok: true; readonly record: ReadRecord } | { readonly ok: false };

const REFUSED: ParsedRecord = Object.freeze({ ok: false });

/**
 * Openers a line may hold before it is scanned for nesting. Tool output full
 * of code holds a bracket every ~150 characters, so most lines pass below
 * this; a thousand containers cost microseconds to build, and the nesting
 * bounds are checked on what was built.
 */
const UNSCANNED_CONTAINERS = 1_024;

/**
 * Parses one stored line (without its LF) as a record of session
 * `sessionId`: a record this version understands (`v` 1 and a known `type`),
 * without the fields it does not know, or a {@link SkippedRecord}. Refuses
 * anything that is not a JSON object, fails its schema, belongs to another
 * session, breaks the nesting bounds, or is neither understood nor ignorable.
 */
export function parseRecordLine(line: string, sessionId: string): ParsedRecord {
  const record = recordOfLine(line, sessionId);
  return record === null ? REFUSED : { ok: true, record };
}

/** {@link parseRecordLine} without its result object: the reader calls it for every line of every history. */
export function recordOfLine(line: string, sessionId: string): ReadRecord | null {
  // Only a line with many brackets pays for the character scan that keeps a hostile one from being built.
  if (!containersWithin(line, UNSCANNED_CONTAINERS)) {
    const depth = nestingDepth(line, RECORD_NESTING_DEPTH);
    if (depth > RECORD_NESTING_DEPTH || (depth > 1 && !utf8BytesWithin(line, 0, NESTED_RECORD_BYTES))) return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const fields = value as Readonly<Record<string, unknown>>;
  const schemas = schemasOf(fields.v, fields.type);
  if (schemas === undefined) return skippedRecord(fields, sessionId, line);
  if (schemas.nested && !nestingWithinBounds(fields, line)) return null;
  const exact = v.safeParse(schemas.exact, value);
  if (exact.success) return exact.output.session_id === sessionId ? exact.output : null;
  // Where the exact check fails and the same checks without it pass, only fields a later writer added differ.
  const extended = v.safeParse(schemas.extended, value);
  if (!extended.success || extended.output.session_id !== sessionId) return null;
  return othersIgnorable(fields, schemas.defines, line) ? extended.output : null;
}
