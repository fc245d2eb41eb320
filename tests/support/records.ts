/**
 * fast-check arbitraries for stored session records, and builders for
 * realistic session files, shared by the record and session-file tests.
 *
 * @module
 */

import fc from "fast-check";
import { encodeRecord, type SessionRecord } from "../../src/store/records.ts";
import { boundTurnContext, type TurnContext } from "../../src/store/turn-context.ts";
import { concatBytes as concatByteArrays } from "../../src/util/bytes.ts";
import { EFFORTS } from "../../src/policy/efforts.ts";
import { LIMITS } from "../../src/protocol/limits.ts";

// deno-lint-ignore no-control-regex -- matching controls is the point
const CONTROLS = /[\u0000-\u001F\u007F-\u009F]/g;

/** A session id in the storage grammar. */
export const sessionIdArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

/** An RFC 3339 UTC timestamp with milliseconds, over the whole four-digit-year range. */
export const timestampArb = fc
  .date({ min: new Date("0000-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true })
  .map((date) => date.toISOString());

/** One UTF-16 code unit that is an unpaired surrogate half. */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

/** Arbitrary text: every code point, plus the occasional lone surrogate that legacy files may hold. */
export const textArb = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof({ arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), weight: 9 }, { arbitrary: loneSurrogate, weight: 1 }),
    maxLength,
  });

/** An id: 1–1,024 UTF-8 bytes without controls, including values at the byte bound. */
export const idArb = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 24 }).map((id) => id.replace(CONTROLS, "_")), weight: 8 },
  { arbitrary: fc.constantFrom("x".repeat(1024), "é".repeat(512), "😀".repeat(256), "€".repeat(341) + "x"), weight: 1 },
);

const countArb = fc.oneof(fc.nat(), fc.maxSafeNat());
const modelArb = fc.string({ unit: "binary", minLength: 1, maxLength: 64 }).map((model) => model.replace(CONTROLS, "_"));
const codeArb = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
const sha256Arb = fc.stringMatching(/^[0-9a-f]{64}$/);

/** One instructions file of a turn's context. */
const fileDigestArb = fc.record({ path: textArb(60), sha256: sha256Arb, bytes: countArb }, { noNullPrototype: true });
/** One skill of a turn's context. */
const skillEntryArb = fc.record({ name: textArb(20), path: textArb(60) }, { noNullPrototype: true });

/** A `turn_started` context as the writer records it: bounded, then the prompt's digest in front. */
export const turnContextArb: fc.Arbitrary<TurnContext> = fc.tuple(
  sha256Arb,
  fc.record(
    {
      instructions: fc.array(fileDigestArb, { maxLength: 4 }),
      skills: fc.array(skillEntryArb, { maxLength: 3 }),
      profile: fc.record({ name: textArb(20), files: fc.array(fileDigestArb, { maxLength: 3 }) }, { noNullPrototype: true, requiredKeys: ["name"] }),
    },
    { noNullPrototype: true, requiredKeys: ["instructions"] },
  ),
).map(([system_sha256, parts]) => ({ system_sha256, ...boundTurnContext(parts) }));

/** Every record type at every version that defines it, each with arbitrary valid fields, for session `sessionId`. */
export function recordArb(sessionId: fc.Arbitrary<string> = sessionIdArb): fc.Arbitrary<SessionRecord> {
  const base = <T extends string>(type: T) => ({ v: fc.constant(1 as const), type: fc.constant(type), session_id: sessionId, at: timestampArb });
  const required = <const K extends string>(keys: readonly K[]) => ["v", "type", "session_id", "at", ...keys] as ("v" | "type" | "session_id" | "at" | K)[];
  return fc.oneof(
    fc.record(
      { ...base("session"), cwd: fc.string({ unit: "binary", minLength: 1 }).map((path) => `/${path.replaceAll("\u0000", "/")}`), created_at: timestampArb },
      { noNullPrototype: true, requiredKeys: required(["created_at"]) },
    ),
    fc.record({ ...base("session_preferences"), provider: codeArb, model: modelArb, effort: fc.constantFrom(...EFFORTS) }, { noNullPrototype: true }),
    fc.record({ ...base("turn_started"), turn_id: idArb, run_id: idArb, context: turnContextArb }, { noNullPrototype: true, requiredKeys: required(["turn_id", "run_id"]) }),
    fc.record({ ...base("user_input"), turn_id: idArb, message_id: idArb, text: textArb() }, { noNullPrototype: true }),
    fc.record({ ...base("assistant_chunk"), turn_id: idArb, message_id: idArb, index: countArb, text: textArb() }, { noNullPrototype: true }),
    fc.record({ ...base("assistant_message"), turn_id: idArb, message_id: idArb, text: textArb(), partial: fc.boolean() }, { noNullPrototype: true }),
    fc.record({ ...base("reasoning_summary"), turn_id: idArb, item_id: idArb, text: textArb(), provider_summary: fc.boolean() }, { noNullPrototype: true, requiredKeys: ["v", "type", "session_id", "at", "turn_id", "item_id", "text"] }),
    fc.record({
      ...base("activity"),
      turn_id: idArb,
      activity_id: idArb,
      kind: fc.constantFrom("tool" as const, "subagent" as const, "compaction" as const),
      name: textArb(64),
      state: fc.constantFrom("started" as const, "completed" as const, "failed" as const),
      summary: textArb(256),
    }, { noNullPrototype: true }),
    fc.record({ ...base("compaction"), turn_id: idArb, summary: textArb(), title: textArb() }, { noNullPrototype: true, requiredKeys: required(["turn_id", "summary"]) }),
    fc.record(
      { ...base("compaction"), v: fc.constant(2 as const), turn_id: idArb, summary: textArb(), title: textArb(), through_turn: idArb },
      { noNullPrototype: true, requiredKeys: required(["turn_id", "summary", "through_turn"]) },
    ),
    fc.record({ ...base("session_title"), title: textArb() }, { noNullPrototype: true }),
    fc.record({ ...base("diagnostic"), turn_id: idArb, code: codeArb, summary: textArb() }, { noNullPrototype: true, requiredKeys: required(["code", "summary"]) }),
    fc.record({ ...base("internal_prompt"), turn_id: idArb, text: textArb() }, { noNullPrototype: true }),
    fc.record(
      { ...base("usage"), turn_id: idArb, input_tokens: countArb, output_tokens: countArb, reasoning_tokens: countArb },
      { noNullPrototype: true, requiredKeys: required(["turn_id", "input_tokens", "output_tokens"]) },
    ),
    fc.record({
      ...base("turn_finished"),
      turn_id: idArb,
      outcome: fc.constantFrom("completed" as const, "cancelled" as const, "failed" as const),
      error_code: fc.option(codeArb, { nil: null }),
    }, { noNullPrototype: true }),
  ) as fc.Arbitrary<SessionRecord>;
}

/** Text a real conversation holds: multibyte and astral characters, quotes, escapes, controls. */
export const realisticTextArb = fc
  .array(
    fc.oneof(
      fc.constantFrom("é", "ß", "ह", "€", "\u2028", "\u2029", "\ufeff", "😀", "𝄞", "🦀", "\u{10ffff}", '"', "\\", "\n", "\r\n", "\t", "\u0000", "\u001b[0m"),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.stringMatching(/^[a-z ]{1,12}$/),
    ),
    { minLength: 1, maxLength: 24 },
  )
  .map((parts) => parts.join(""));

/** The shape of one turn in {@link buildSession}. */
export interface TurnTexts {
  readonly prompt: string;
  readonly reply: string;
  readonly summary: string;
}

/** A realistic history: session and preferences, then complete turns with input, activity, reply and usage. */
export function buildSession(sessionId: string, turns: readonly TurnTexts[]): SessionRecord[] {
  const at = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 1_000).toISOString();
  const common = (n: number) => ({ v: 1 as const, session_id: sessionId, at: at(n) });
  const records: SessionRecord[] = [
    { ...common(0), type: "session", cwd: "/home/user/project", created_at: at(0) },
    { ...common(1), type: "session_preferences", provider: "ollama", model: "qwen3:8b", effort: "default" },
  ];
  turns.forEach((turn, index) => {
    const t = 10 + index * 10;
    const turnId = `turn-${index}`;
    records.push(
      { ...common(t), type: "turn_started", turn_id: turnId, run_id: `run-${index}` },
      { ...common(t + 1), type: "user_input", turn_id: turnId, message_id: `user-${index}`, text: turn.prompt },
      { ...common(t + 2), type: "activity", turn_id: turnId, activity_id: `act-${index}`, kind: "tool", name: "read_file", state: "started", summary: "" },
      { ...common(t + 3), type: "activity", turn_id: turnId, activity_id: `act-${index}`, kind: "tool", name: "read_file", state: "completed", summary: turn.summary },
      { ...common(t + 4), type: "assistant_message", turn_id: turnId, message_id: `reply-${index}`, text: turn.reply, partial: false },
      { ...common(t + 5), type: "usage", turn_id: turnId, input_tokens: 1200 + index, output_tokens: 80 },
      { ...common(t + 6), type: "turn_finished", turn_id: turnId, outcome: "completed", error_code: null },
    );
  });
  return records;
}

/**
 * A finished turn of one-part inputs, one more than the snapshot's part
 * budget: a small file whose projection every `history.page` answers
 * `history_limit`.
 */
export function overSnapshotParts(sessionId: string, cwd: string): SessionRecord[] {
  const at = "2026-01-01T00:00:00.000Z";
  const common = { v: 1 as const, session_id: sessionId, at };
  const inputs = Array.from({ length: LIMITS.history_snapshot_parts + 1 }, (_, i) => ({ ...common, type: "user_input" as const, turn_id: "t0", message_id: `u${i}`, text: "q" }));
  return [
    { ...common, type: "session", cwd, created_at: at },
    { ...common, type: "turn_started", turn_id: "t0", run_id: "run0" },
    ...inputs,
    { ...common, type: "turn_finished", turn_id: "t0", outcome: "completed", error_code: null },
  ];
}

/** The stored bytes of `records`, line by line. */
export function encodeAll(records: readonly SessionRecord[]): Uint8Array {
  const lines = records.map((record) => {
    const line = encodeRecord(record);
    if (line === null) throw new Error("fixture record failed its schema");
    return line;
  });
  return concatBytes(lines);
}

/** Concatenates byte arrays and strings (as UTF-8). */
export function concatBytes(parts: readonly (Uint8Array | string)[]): Uint8Array {
  return concatByteArrays(parts.map((part) => (typeof part === "string" ? new TextEncoder().encode(part) : part)));
}
