/**
 * The record types of a primary session history (`docs/storage.md#records`):
 * one valibot schema per `type`, the discriminated {@link RecordSchema}, and
 * the two conversions between a record and its stored line.
 *
 * The writer encodes exactly these schemas; the reader (`record-lines.ts`)
 * also meets what a later writer may add to them (`record-evolution.ts`).
 *
 * @module
 */

import * as v from "valibot";
import { PROVIDER_NAME_PATTERN } from "../protocol/identity.ts";
import { LIMITS } from "../protocol/limits.ts";
import { exactObject, notArray } from "../util/exact-object.ts";
import { isPrintable } from "../util/redaction.ts";
import { bytesWithin, CountSchema, IdSchema, isIdentifier, SessionIdSchema, stringWhere, TextSchema, TimestampSchema, withinNameBytes } from "./record-field-schemas.ts";
import { EFFORTS } from "../policy/efforts.ts";
import { NESTED_RECORD_BYTES } from "./record-evolution.ts";
import { TurnContextSchema } from "./turn-context.ts";
import { SUBAGENT_LINK } from "./subagent-link.ts";
import { TOOL_CARD } from "./tool-card-record.ts";
import { REWIND } from "./rewind-record.ts";

export type { TurnContext, TurnContextParts } from "./turn-context.ts";

/**
 * The newest record format this code reads: format 1 defines the types at `v: 1`, format 2 the replacing
 * `compaction` (it changes the replay), format 3 `subagent_link`, format 4 `rewind` (it removes turns). A record
 * is written with the oldest `v` defining it.
 */
export const RECORD_VERSION = 4;

function common<const T extends string, const V extends 1 | 2 = 1>(type: T, version: V = 1 as V) {
  return {
    v: v.literal(version),
    type: v.literal(type),
    session_id: SessionIdSchema,
    at: TimestampSchema,
  };
}

// Each table below is used twice: as an exported `exactObject` schema, and as
// a `v.strictObject` option of the variant, because `v.variant` only admits
// plain object schemas as options. The variant is wrapped in `notArray`, so
// arrays are refused on both paths.
const SESSION = {
  ...common("session"),
  // Absoluteness and canonical form are checked against the child's cwd on
  // open (`cwd_mismatch`), not here; a NUL can never be part of a path. An
  // empty cwd records none: the spec checks only every nonempty one.
  cwd: v.exactOptional(stringWhere((path) => !path.includes("\u0000"), "Invalid cwd")),
  created_at: TimestampSchema,
};
const SESSION_PREFERENCES = {
  ...common("session_preferences"),
  provider: stringWhere((text) => PROVIDER_NAME_PATTERN.test(text), "Invalid provider"),
  model: stringWhere((text) => withinNameBytes(text) && isPrintable(text), "Invalid model"),
  effort: v.picklist(EFFORTS),
};
// `context` (turn-context.ts) is informational: nothing derived from a history reads it.
const TURN_STARTED = { ...common("turn_started"), turn_id: IdSchema, run_id: IdSchema, context: v.exactOptional(TurnContextSchema) };
const USER_INPUT = { ...common("user_input"), turn_id: IdSchema, message_id: IdSchema, text: TextSchema };
const ASSISTANT_CHUNK = {
  ...common("assistant_chunk"),
  turn_id: IdSchema,
  message_id: IdSchema,
  index: CountSchema,
  text: TextSchema,
};
const ASSISTANT_MESSAGE = {
  ...common("assistant_message"),
  turn_id: IdSchema,
  message_id: IdSchema,
  text: TextSchema,
  partial: v.boolean(),
};
const REASONING_SUMMARY = {
  ...common("reasoning_summary"),
  turn_id: IdSchema,
  item_id: IdSchema,
  text: TextSchema,
  // Optional: records written before provenance was tracked lack it, and the
  // projection omits them rather than failing the whole session.
  provider_summary: v.exactOptional(v.boolean()),
};
const ACTIVITY = {
  ...common("activity"),
  turn_id: IdSchema,
  activity_id: IdSchema,
  kind: v.picklist(["tool", "subagent", "compaction"]),
  name: stringWhere(bytesWithin(0, LIMITS.name_bytes), "Invalid name"),
  state: v.picklist(["started", "completed", "failed"]),
  summary: stringWhere(bytesWithin(0, LIMITS.summary_bytes), "Invalid summary"),
  // Within format 1 (an older reader ignores it and derives nothing from it): the session grant that let the call run.
  session_grant: v.exactOptional(stringWhere(bytesWithin(1, LIMITS.summary_bytes), "Invalid session grant")),
};
// The optional title is durable title metadata a compaction may carry; session listing shows the latest one.
const COMPACTION = { ...common("compaction"), turn_id: IdSchema, summary: TextSchema, title: v.exactOptional(TextSchema) };
// Format 2: the summary replaces, in the provider replay, every replayed record up to the last one
// of turn `through_turn` before it (docs/storage.md, "Compaction").
const REPLACING_COMPACTION = { ...common("compaction", 2), turn_id: IdSchema, summary: TextSchema, title: v.exactOptional(TextSchema), through_turn: IdSchema };
// A session's title as set by the user or a titling step; never derived from a prompt by this backend.
const SESSION_TITLE = { ...common("session_title"), title: TextSchema };
const DIAGNOSTIC = {
  ...common("diagnostic"),
  turn_id: v.exactOptional(IdSchema),
  code: stringWhere(isIdentifier, "Invalid code"),
  summary: TextSchema,
};
const INTERNAL_PROMPT = { ...common("internal_prompt"), turn_id: IdSchema, text: TextSchema };
// `cached_input_tokens` came within format 1: no reader derives what it shows or replays from usage.
const USAGE = { ...common("usage"), turn_id: IdSchema, input_tokens: CountSchema, output_tokens: CountSchema, reasoning_tokens: v.exactOptional(CountSchema), cached_input_tokens: v.exactOptional(CountSchema) };
const TURN_FINISHED = {
  ...common("turn_finished"),
  turn_id: IdSchema,
  outcome: v.picklist(["completed", "cancelled", "failed"]),
  error_code: v.nullable(stringWhere(isIdentifier, "Invalid code")),
};

/** The `session` record: always and only the first line. */
export const SessionStartRecordSchema = exactObject(SESSION);
/** `session_preferences`: restores the provider/model/effort selection on open. */
export const SessionPreferencesRecordSchema = exactObject(SESSION_PREFERENCES);
/** `turn_started`: opens a turn. */
export const TurnStartedRecordSchema = exactObject(TURN_STARTED);
/** `user_input`: the user's prompt. */
export const UserInputRecordSchema = exactObject(USER_INPUT);
/** `assistant_chunk`: legacy streamed output without a final message. */
export const AssistantChunkRecordSchema = exactObject(ASSISTANT_CHUNK);
/** `assistant_message`: the reconciled assistant reply. */
export const AssistantMessageRecordSchema = exactObject(ASSISTANT_MESSAGE);
/** `reasoning_summary`: a summary item; a later one with the same ids replaces it. */
export const ReasoningSummaryRecordSchema = exactObject(REASONING_SUMMARY);
/** `activity`: one state of a tool, subagent or compaction activity. */
export const ActivityRecordSchema = exactObject(ACTIVITY);
/** `compaction` at `v: 1`: a compaction summary shown in history, which the replay does not read. */
export const CompactionRecordSchema = exactObject(COMPACTION);
/** `compaction` at `v: 2`: a summary that replaces earlier records in the provider replay. */
export const ReplacingCompactionRecordSchema = exactObject(REPLACING_COMPACTION);
/** `session_title`: the session's display title, which listing shows; never projected. */
export const SessionTitleRecordSchema = exactObject(SESSION_TITLE);
/** `diagnostic`: a diagnostic shown in history. */
export const DiagnosticRecordSchema = exactObject(DIAGNOSTIC);
/** `internal_prompt`: replayed to the provider, never projected. */
export const InternalPromptRecordSchema = exactObject(INTERNAL_PROMPT);
/** `usage`: token counts of a turn. */
export const UsageRecordSchema = exactObject(USAGE);
/** `turn_finished`: closes a turn. */
export const TurnFinishedRecordSchema = exactObject(TURN_FINISHED);

const VARIANT = v.variant("type", [
  v.strictObject(SESSION),
  v.strictObject(SESSION_PREFERENCES),
  v.strictObject(TURN_STARTED),
  v.strictObject(USER_INPUT),
  v.strictObject(ASSISTANT_CHUNK),
  v.strictObject(ASSISTANT_MESSAGE),
  v.strictObject(REASONING_SUMMARY),
  v.strictObject(ACTIVITY),
  v.strictObject(COMPACTION),
  v.strictObject(REPLACING_COMPACTION),
  v.strictObject(SESSION_TITLE),
  v.strictObject(DIAGNOSTIC),
  v.strictObject(INTERNAL_PROMPT),
  v.strictObject(USAGE),
  v.strictObject(TURN_FINISHED),
  v.strictObject(SUBAGENT_LINK),
  v.strictObject(TOOL_CARD),
  v.strictObject(REWIND),
]);

/** Any record, discriminated by `type`; arrays and unknown types are refused. */
export const RecordSchema = v.pipe(notArray, VARIANT);

/** The schemas of one record type as this version defines it. */
export interface TypeSchemas {
  /** Every field checked, no other field allowed: what the writer writes. */
  readonly exact: v.GenericSchema<unknown, SessionRecord>;
  /** The same checks, fields it does not name left out of the output: what a later writer may have added to. */
  readonly extended: v.GenericSchema<unknown, SessionRecord>;
  /** Whether the type defines a field of this name. */
  readonly defines: (name: string) => boolean;
  /** Whether the type defines a field that holds an array or object, so its lines keep the nested bounds. */
  readonly nested: boolean;
}

/** The types that define a field holding an array or object. */
const NESTED_TYPES: ReadonlySet<string> = new Set(["turn_started", "subagent_link", "tool_card"]);

// `v.variant` tries its options in turn (most of the parse time on a large
// history); a lookup by `v` and `type` reaches the same option schema directly.
const SCHEMA_BY_VERSION: readonly ReadonlyMap<unknown, TypeSchemas>[] = [1, 2, 3, 4].map((version) =>
  new Map(
    VARIANT.options.filter((option) => option.entries.v.literal === version).map((option) => [option.entries.type.literal, {
      exact: option as v.GenericSchema<unknown, SessionRecord>,
      extended: v.object(option.entries) as v.GenericSchema<unknown, SessionRecord>,
      defines: (name: string) => Object.hasOwn(option.entries, name),
      nested: NESTED_TYPES.has(option.entries.type.literal),
    }]),
  )
);

/** The schemas of `type` at record format `version`, or undefined when this version does not understand such a record. */
export function schemasOf(version: unknown, type: unknown): TypeSchemas | undefined {
  return version === 1 || version === 2 || version === 3 || version === 4 ? SCHEMA_BY_VERSION[version - 1]!.get(type) : undefined;
}

/** Validates `value` against the schema of its own `v` and `type`: what {@link RecordSchema} decides, without the scan. */
function checkRecord(value: unknown): SessionRecord | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const fields = value as { readonly v?: unknown; readonly type?: unknown };
  const schemas = schemasOf(fields.v, fields.type);
  if (schemas === undefined) return null;
  const parsed = v.safeParse(schemas.exact, value);
  return parsed.success ? parsed.output as SessionRecord : null;
}

/** The `session` record. */
export type SessionStartRecord = v.InferOutput<typeof SessionStartRecordSchema>;
/** The `session_preferences` record. */
export type SessionPreferencesRecord = v.InferOutput<typeof SessionPreferencesRecordSchema>;
/** The `turn_started` record. */
export type TurnStartedRecord = v.InferOutput<typeof TurnStartedRecordSchema>;
/** The `user_input` record. */
export type UserInputRecord = v.InferOutput<typeof UserInputRecordSchema>;
/** The `assistant_chunk` record. */
export type AssistantChunkRecord = v.InferOutput<typeof AssistantChunkRecordSchema>;
/** The `assistant_message` record. */
export type AssistantMessageRecord = v.InferOutput<typeof AssistantMessageRecordSchema>;
/** The `reasoning_summary` record. */
export type ReasoningSummaryRecord = v.InferOutput<typeof ReasoningSummaryRecordSchema>;
/** The `activity` record. */
export type ActivityRecord = v.InferOutput<typeof ActivityRecordSchema>;
/** The `compaction` record, either version. */
export type CompactionRecord = v.InferOutput<typeof CompactionRecordSchema> | ReplacingCompactionRecord;
/** The `compaction` record at `v: 2`. */
export type ReplacingCompactionRecord = v.InferOutput<typeof ReplacingCompactionRecordSchema>;
/** The `session_title` record. */
export type SessionTitleRecord = v.InferOutput<typeof SessionTitleRecordSchema>;
/** The `diagnostic` record. */
export type DiagnosticRecord = v.InferOutput<typeof DiagnosticRecordSchema>;
/** The `internal_prompt` record. */
export type InternalPromptRecord = v.InferOutput<typeof InternalPromptRecordSchema>;
/** The `usage` record. */
export type UsageRecord = v.InferOutput<typeof UsageRecordSchema>;
/** The `turn_finished` record. */
export type TurnFinishedRecord = v.InferOutput<typeof TurnFinishedRecordSchema>;

/** Any record of a primary history. */
export type SessionRecord = v.InferOutput<typeof RecordSchema>;
/** One record `type`. */
export type RecordType = SessionRecord["type"];

/** Every record `type` this version reads, in the order of `docs/storage.md`. */
export const RECORD_TYPES: readonly RecordType[] = Object.freeze([
  ...["session", "session_preferences", "turn_started", "user_input", "assistant_chunk", "assistant_message", "reasoning_summary"] as const,
  ...["activity", "compaction", "session_title", "diagnostic", "internal_prompt", "usage", "turn_finished", "subagent_link", "tool_card", "rewind"] as const,
]);

const encoder = new TextEncoder();

/** Whether a field of `record` holds an array or object. */
function holdsNested(record: SessionRecord): boolean {
  return Object.values(record).some((value) => typeof value === "object" && value !== null);
}

/**
 * Encodes `record` as its stored line: compact JSON and one LF. Returns null
 * for a record that fails its schema, since writing it would make the whole
 * file `session_invalid` on the next open, and for an encoding that holds a
 * raw LF, which would split the record in two. `JSON.stringify` escapes every
 * control character in strings and emits no whitespace, so the second case is
 * unreachable; it is checked because the one-line invariant is load-bearing.
 * Also null for a line holding an array or object past the nested line bound,
 * which every reader refuses (`record-evolution.ts`).
 * Lone surrogates are emitted as `\udXXX` escapes, so the bytes are always
 * valid UTF-8.
 */
export function encodeRecord(record: SessionRecord): Uint8Array | null {
  const checked = checkRecord(record);
  if (checked === null) return null;
  const json = JSON.stringify(checked);
  if (json.includes("\n")) return null;
  const bytes = encoder.encode(`${json}\n`);
  // A line with nested data past the bound would make every reader refuse the file.
  if (bytes.length - 1 > NESTED_RECORD_BYTES && NESTED_TYPES.has(checked.type) && holdsNested(checked)) return null;
  return bytes;
}
