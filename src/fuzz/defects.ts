/**
 * The values the spec refuses for each kind of params field, each with a
 * label saying which rule it breaks: wrong JSON types, null where a field is
 * not nullable, the grammars' edges (empty, 65 bytes, a character outside
 * the set), the page limit's range, prompts over the byte bound or blank,
 * names over 256 bytes or with a control character, and every effort request
 * object the spec names as invalid. Every one of them is `invalid_params`.
 *
 * @module
 */

import fc from "fast-check";
import { LIMITS } from "../protocol/limits.ts";
import { type FieldKind, SET_EFFORT_VALUES } from "./fields.ts";
import { hasNonSpace, prompt, WHITE_SPACE } from "./text.ts";

/** A defective field value: what it is and the JSON text sent for it (a JS value cannot hold a duplicate key). */
export interface Defect {
  readonly label: string;
  readonly json: string;
}

const defect = (label: string, value: unknown): Defect => ({ label, json: JSON.stringify(value) });
const raw = (label: string, json: string): Defect => ({ label, json });

const WRONG_TYPES: readonly Defect[] = [defect("a number", 7), defect("a boolean", true), defect("an array", []), defect("an object", {})];
const NULL: Defect = defect("null", null);
const over = "a".repeat(LIMITS.identifier_bytes + 1);

/** Strings outside the 64-byte identifier grammar `[A-Za-z0-9._-]{1,64}`. */
const OFF_GRAMMAR: readonly Defect[] = [
  defect("empty string", ""),
  defect("65 bytes", over),
  defect("a space", "a b"),
  defect("non-ASCII", "é"),
  defect("a slash", "a/b"),
  defect("a colon", "a:b"),
  defect("a NUL", "a\u0000"),
];

/** Strings outside the session-id grammar; `.` is the one character opaque ids allow and session ids do not. */
const OFF_SESSION_GRAMMAR: readonly Defect[] = [...OFF_GRAMMAR, defect("a dot", "a.b"), defect("dot-dot", ".."), defect("a dot at 64 bytes", `${"a".repeat(63)}.`)];

const NAME_LIMIT = LIMITS.name_bytes;

/** Names the spec refuses: empty, over 256 UTF-8 bytes (ASCII, and multibyte where UTF-16 length stays under 256), controls. */
const BAD_NAMES: readonly Defect[] = [
  defect("empty name", ""),
  defect("257 ASCII bytes", "a".repeat(NAME_LIMIT + 1)),
  defect("257 bytes ending in a 2-byte character", `${"a".repeat(NAME_LIMIT - 1)}é`),
  defect("258 bytes of 3-byte characters (86 UTF-16 units)", "日".repeat(86)),
  defect("260 bytes of 4-byte characters", "😀".repeat(65)),
  defect("a NUL", "qwen\u0000"),
  defect("a line feed", "qwen\nx"),
  defect("a tab", "qwen\tx"),
  defect("a unit separator", "\u001f"),
  defect("DEL", "qwen\u007f"),
  defect("a C1 control (NEL)", "qwen\u0085"),
  defect("a C1 control (APC)", "\u009f"),
];

/** Page limits outside the integers 1–100. */
const BAD_LIMITS: readonly Defect[] = [
  defect("limit 0", 0),
  defect("limit -1", -1),
  defect("limit 101", 101),
  defect("limit 1.5", 1.5),
  defect("limit 100.5", 100.5),
  defect("limit 2^53", 2 ** 53),
  defect("limit as a string", "10"),
  defect("limit as an array", [10]),
  defect("a boolean", true),
  NULL,
];

/** `allow` values that are not a JSON boolean. */
const BAD_ALLOW: readonly Defect[] = [defect("allow as a string", "true"), defect("allow 1", 1), defect("allow 0", 0), NULL, defect("an array", [true])];

/** Modes the spec does not name: other words, case variants, padded spellings. */
const UNKNOWN_MODES: readonly string[] = ["reset", "none", "auto", "off", "unset", "Keep", "KEEP", "Default", "DEFAULT", "Set", "SET", " keep", "keep ", ""];

/** Efforts `{ "mode": "set" }` refuses: `default`, unknown levels, aliases and case or spacing variants of the five. */
const UNKNOWN_EFFORTS: readonly string[] = [
  "default",
  "minimal",
  "none",
  "off",
  "auto",
  "med",
  "mid",
  "hi",
  "lo",
  "x-high",
  "x_high",
  "extra-high",
  "extra_high",
  "maximum",
  "Low",
  "LOW",
  "Medium",
  "High",
  "HIGH",
  "XHigh",
  "xHigh",
  "Max",
  "MAX",
  " high",
  "high ",
  "",
];

/**
 * Every invalid effort request object the spec lists: null, not an object,
 * no mode, null mode or value, unknown or case-variant modes, a value on
 * `keep`/`default`, `set` without a value, `set/default`, unknown efforts,
 * aliases and case variants, unknown and duplicate fields.
 */
export function effortDefects(): readonly Defect[] {
  const list: Defect[] = [
    defect("null effort", null),
    defect("effort as a string", "high"),
    defect("effort as an array", [{ mode: "keep" }]),
    defect("effort {} without mode", {}),
    defect("null mode", { mode: null }),
    defect("value without mode", { value: "high" }),
    defect("set without value", { mode: "set" }),
    defect("set with null value", { mode: "set", value: null }),
    defect("set with a numeric value", { mode: "set", value: 3 }),
    defect("set with an array value", { mode: "set", value: ["high"] }),
    defect("keep with null value", { mode: "keep", value: null }),
    defect("default with null value", { mode: "default", value: null }),
    defect("keep with an unknown field", { mode: "keep", x: 1 }),
    defect("default with an unknown field", { mode: "default", reason: "reset" }),
    defect("set with an unknown field", { mode: "set", value: "high", scope: "global" }),
    defect("keep with a case-variant field", { mode: "keep", Mode: "keep" }),
    raw("keep with a duplicate mode", '{"mode":"keep","mode":"keep"}'),
    raw("set with a duplicate value", '{"mode":"set","value":"high","value":"high"}'),
  ];
  for (const value of [...SET_EFFORT_VALUES, "default"]) {
    list.push(defect(`keep with value ${value}`, { mode: "keep", value }), defect(`default with value ${value}`, { mode: "default", value }));
  }
  for (const mode of UNKNOWN_MODES) list.push(defect(`unknown mode ${JSON.stringify(mode)}`, { mode }), defect(`unknown mode ${JSON.stringify(mode)} with a value`, { mode, value: "high" }));
  for (const value of UNKNOWN_EFFORTS) list.push(defect(`set/${JSON.stringify(value)}`, { mode: "set", value }));
  return list;
}

const CAPABILITY_DEFECTS: readonly Defect[] = [
  ...WRONG_TYPES.filter((item) => item.json !== "[]"),
  NULL,
  defect("a string instead of a list", "status"),
  defect("a repeated name", ["status", "status"]),
  defect("a numeric name", ["status", 7]),
  defect("a null name", [null]),
  defect("an empty name", [""]),
  defect("a 65-byte name", [over]),
  defect("a name with a space", ["session open"]),
  defect("17 distinct names (bound 16)", Array.from({ length: LIMITS.required_capabilities + 1 }, (_, index) => `cap${index}`)),
];

/** Scopes `approval.answer` refuses: other words, case and spacing variants. */
const BAD_SCOPES: readonly Defect[] = [
  defect("an unknown scope", "forever"),
  defect("a case-variant scope", "Session"),
  defect("a padded scope", " once"),
  defect("an empty scope", ""),
];

/**
 * The labelled invalid values of a field of `kind`, as an arbitrary (most
 * kinds are a fixed list; prompts are generated at the byte bound).
 * `nullable` says whether null is valid for the field and so left out.
 */
export function defectsOf(kind: FieldKind, nullable: boolean): fc.Arbitrary<Defect> {
  const strings = (grammar: readonly Defect[]) => fc.constantFrom(...grammar, ...WRONG_TYPES, ...(nullable ? [] : [NULL]));
  switch (kind) {
    case "session":
      return strings(OFF_SESSION_GRAMMAR);
    case "opaque":
    case "nullable-opaque":
      return strings(OFF_GRAMMAR);
    case "limit":
      return fc.constantFrom(...BAD_LIMITS);
    case "prompt":
      return fc.oneof(
        prompt().filter((sample) => !sample.valid).map((sample) => defect(`prompt of ${new TextEncoder().encode(sample.text).length} bytes, ${hasNonSpace(sample.text) ? "over the bound" : "blank"}`, sample.text)),
        fc.constantFrom(...WHITE_SPACE, WHITE_SPACE.join("")).map((text) => defect(`blank prompt ${JSON.stringify(text)} (Unicode White_Space only)`, text)),
        fc.constantFrom(...WRONG_TYPES, NULL),
      );
    case "allow":
      return fc.constantFrom(...BAD_ALLOW);
    case "name":
      return strings(BAD_NAMES);
    case "effort":
      return fc.constantFrom(...effortDefects());
    case "capabilities":
      return fc.constantFrom(...CAPABILITY_DEFECTS);
    case "scope":
      return strings(BAD_SCOPES);
  }
}
