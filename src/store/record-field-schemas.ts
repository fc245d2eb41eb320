/**
 * The valibot schemas of the fields records share (`docs/storage.md#records`),
 * built so each field costs one schema call: every record of a history is
 * validated (~100,000 of them per listing), and a pipe of `v.string()` and
 * its actions costs a dataset pass per action.
 *
 * @module
 */

import * as v from "valibot";
import { IDENTIFIER_PATTERN, SESSION_ID_PATTERN } from "../protocol/identity.ts";
import { LIMITS } from "../protocol/limits.ts";
import { isPrintable } from "../util/redaction.ts";
import { isIsoTimestamp, utf8BytesWithin } from "./record-fields.ts";

/** The schema of one string field. */
export type StringField = v.CustomSchema<string, v.ErrorMessage<v.CustomIssue> | undefined>;

/**
 * A string that `accepts`, as one schema. Its closures share one call site,
 * which sees every `accepts`: the fields every record has get their own
 * checks below, so each call site stays monomorphic.
 */
export const stringWhere = (accepts: (text: string) => boolean, message: string): StringField =>
  v.custom<string>((input) => typeof input === "string" && accepts(input), message);

/** Whether a string is `min`–`max` UTF-8 bytes (valibot's byte actions encode every string to count it). */
export const bytesWithin = (min: number, max: number) => (text: string): boolean => utf8BytesWithin(text, min, max);

/** A model name's bound: 1–256 UTF-8 bytes. */
export const withinNameBytes: (text: string) => boolean = bytesWithin(1, LIMITS.name_bytes);

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` naming a real instant (no `02-30`, no hour 24):
 * exactly the form `Date.prototype.toISOString` writes for years 0–9999.
 */
export const TimestampSchema: StringField = v.custom<string>((input) => typeof input === "string" && isIsoTimestamp(input), "Invalid timestamp");

const withinIdBytes = bytesWithin(1, LIMITS.activity_id_bytes);
/**
 * Ids end up compared and echoed, so unlike free text they must be
 * well-formed and printable. 1,024 bytes is the widest id bound the protocol
 * publishes.
 */
export const IdSchema: StringField = v.custom<string>(
  (input) => typeof input === "string" && withinIdBytes(input) && isPrintable(input),
  "Invalid id",
);

// Every record of a file names the same session: the last id that matched is
// remembered, so the pattern runs about once per file, not once per line. It
// starts as null, not "": the empty string is no session id.
let matchedSessionId: string | null = null;
const isSessionId = (text: string): boolean => text === matchedSessionId || (SESSION_ID_PATTERN.test(text) && (matchedSessionId = text, true));
/** A session id by the wire grammar. */
export const SessionIdSchema: StringField = v.custom<string>((input) => typeof input === "string" && isSessionId(input), "Invalid session id");

/** Whether `text` is a diagnostic or error code by the identifier grammar. */
export const isIdentifier = (text: string): boolean => IDENTIFIER_PATTERN.test(text);

/**
 * Free text stays arbitrary: legacy files may hold lone surrogates, which
 * JSON.parse accepts as `\ud800` escapes and projection later sanitises.
 */
export const TextSchema: v.StringSchema<undefined> = v.string();

/** A count: a safe integer, zero or more. */
export const CountSchema: v.CustomSchema<number, v.ErrorMessage<v.CustomIssue> | undefined> = v.custom<number>((input) => Number.isSafeInteger(input) && (input as number) >= 0, "Invalid count");
