/**
 * What this version does with what a later writer may add to a history
 * (`docs/storage.md#how-the-record-format-evolves`): fields it does not know
 * on a record it understands are ignored, a record it does not understand is
 * skipped when marked `ignorable` and refuses the file otherwise, and every
 * line, whatever it holds, keeps within the nesting bounds. The rule is the
 * PNG one (ancillary and critical chunks): a writer must say what an older
 * reader may pass over, so a record that removes or replaces what earlier
 * records say (a rewind, a compaction replacing turns) can never be skipped
 * into a replay of turns the user removed.
 *
 * @module
 */

import { LIMITS } from "../protocol/limits.ts";
import { SESSION_ID_PATTERN } from "../protocol/identity.ts";
import { isIsoTimestamp, utf8BytesWithin } from "./record-fields.ts";

/**
 * How deeply a record's containers may nest, the record object included:
 * half the protocol's `json_depth`, so whatever a record holds still fits
 * into a frame with the envelope around it.
 */
export const RECORD_NESTING_DEPTH = LIMITS.json_depth / 2;

/**
 * The most bytes (without its LF) of a line holding an array or object
 * besides the record object: the frame bound, so stored structured data is
 * never larger than one frame can carry. Text stays in scalar fields, bounded
 * only by the history.
 */
export const NESTED_RECORD_BYTES = LIMITS.output_frame_bytes;

/** The grammar of a record `type` and of every field name: a later writer's too. */
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** The envelope field a writer sets to `true` on a record an older reader may skip. */
const IGNORABLE = "ignorable";

/**
 * A record this version does not understand but may skip: only its envelope
 * was checked, and only its time is kept (a listing's `updated_at` counts it,
 * as a release that understands the record does). Its `type` is null, never
 * the stored one, so no code reads it as a record of a type it knows.
 */
export interface SkippedRecord {
  readonly type: null;
  readonly at: string;
}

/** A parsed JSON object, as the reader has it before any schema. */
type Fields = Readonly<Record<string, unknown>>;

/**
 * How deeply `value` nests containers (a scalar is 0), counted no further
 * than `limit + 1`, so a hostile structure costs at most `limit` levels of
 * recursion.
 */
function depthOf(value: unknown, limit: number): number {
  if (typeof value !== "object" || value === null) return 0;
  if (limit === 0) return 1;
  let deepest = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    deepest = Math.max(deepest, depthOf(item, limit - 1));
    if (deepest >= limit) break;
  }
  return 1 + deepest;
}

/**
 * Whether the fields of `record` that `known` does not name may be ignored:
 * each named by the field grammar (`ignorable` only as `true`), nested within
 * the depth bound, and the line within {@link NESTED_RECORD_BYTES} when any of
 * them is an array or object. `line` is the stored line the record was parsed from.
 */
export function othersIgnorable(record: Fields, known: (name: string) => boolean, line: string): boolean {
  let nested = false;
  for (const name of Object.keys(record)) {
    if (known(name)) continue;
    const value = record[name];
    if (name === IGNORABLE) {
      if (value !== true) return false;
      continue;
    }
    if (!NAME_PATTERN.test(name)) return false;
    const depth = depthOf(value, RECORD_NESTING_DEPTH - 1);
    if (depth > RECORD_NESTING_DEPTH - 1) return false;
    nested ||= depth > 0;
  }
  return !nested || utf8BytesWithin(line, 0, NESTED_RECORD_BYTES);
}

/**
 * Whether the fields of `record`, a record this version understands, keep
 * within the nesting bounds every line keeps: each nested within the depth
 * bound, and the line within {@link NESTED_RECORD_BYTES} when any of them is
 * an array or object. The fields a type defines are checked as a later
 * writer's are ({@link othersIgnorable}), so a history this version writes
 * is one every older reader can still skip through.
 */
export function nestingWithinBounds(record: Fields, line: string): boolean {
  let nested = false;
  for (const value of Object.values(record)) {
    if (typeof value !== "object" || value === null) continue;
    if (depthOf(value, RECORD_NESTING_DEPTH - 1) > RECORD_NESTING_DEPTH - 1) return false;
    nested = true;
  }
  return !nested || utf8BytesWithin(line, 0, NESTED_RECORD_BYTES);
}

const ENVELOPE = new Set(["v", "type", "session_id", "at"]);
const inEnvelope = (name: string): boolean => ENVELOPE.has(name);

/**
 * `record`, which this version does not understand, as a skipped record of
 * session `sessionId`, or null when it must refuse the file: not marked
 * `ignorable`, a broken envelope (`v` a positive integer, `type` by the name
 * grammar, this session's id, a timestamp), a field outside the grammar or
 * the nesting bounds, or a `session` record, which opens the file and which
 * no reader may pass over.
 */
export function skippedRecord(record: Fields, sessionId: string, line: string): SkippedRecord | null {
  const { v, type, session_id: id, at } = record;
  if (record[IGNORABLE] !== true || !Number.isSafeInteger(v) || (v as number) < 1) return null;
  if (typeof type !== "string" || !NAME_PATTERN.test(type) || type === "session") return null;
  if (id !== sessionId || !SESSION_ID_PATTERN.test(sessionId)) return null;
  if (typeof at !== "string" || !isIsoTimestamp(at)) return null;
  return othersIgnorable(record, inEnvelope, line) ? { type: null, at } : null;
}
