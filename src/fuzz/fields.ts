/**
 * The params of every method as the spec states them, one row per field,
 * and the valid values of each kind of field at its boundaries. Valid and
 * invalid params are both generated from this one table, so a field the
 * spec adds is added once and gets its defects with it.
 *
 * @module
 */

import fc from "fast-check";
import { LIMITS } from "../protocol/limits.ts";
import type { RequiredOnlyMethod } from "../protocol/negotiation.ts";
import type { KitMethod } from "./methods.ts";
import { boundedId, identifier, INVISIBLE_NON_SPACE, prompt } from "./text.ts";

/**
 * What a params field holds, which decides its valid values and its
 * defects: a session id, an opaque id (the identifier grammar: revisions,
 * cursors, run, approval and request ids, provider names of `model.refresh`),
 * one that may also be null, a page limit, a prompt, a boolean, a
 * `selection.set` provider or model name, an effort request,
 * `initialize`'s capability list, or an `approval.answer` scope.
 */
export type FieldKind = "session" | "opaque" | "nullable-opaque" | "limit" | "prompt" | "allow" | "name" | "effort" | "capabilities" | "scope";

/** One params field: its wire name, its kind, and whether the spec requires it. */
export interface FieldSpec {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  /**
   * The extension capability the field belongs to: valid only for a child
   * that negotiated it, and an unknown field (`invalid_params`) for any
   * other. Absent: a base field.
   */
  readonly extension?: string;
}

const field = (name: string, kind: FieldKind, required = true, extension?: string): FieldSpec => ({ name, kind, required, ...(extension === undefined ? {} : { extension }) });
const PAGED: readonly FieldSpec[] = [field("revision", "nullable-opaque", false), field("cursor", "nullable-opaque", false), field("limit", "limit", false)];

/**
 * Every method's params fields, as the spec lists them, plus the fields of
 * extension capabilities (all other fields are unknown, hence
 * `invalid_params`). Paged methods (`session.list`,
 * `session.discover`, `model.catalog`) also pair revision and cursor, which
 * no single row expresses; see {@link isPaged}.
 */
export const PARAMS_FIELDS: Readonly<Record<KitMethod, readonly FieldSpec[]>> = Object.freeze({
  "initialize": [field("required_capabilities", "capabilities")],
  "status": [],
  "shutdown": [],
  "session.create": [],
  "session.open": [field("session_id", "session")],
  "session.list": PAGED,
  "session.discover": PAGED,
  "history.page": [field("session_id", "session"), field("revision", "opaque"), field("cursor", "nullable-opaque", false)],
  "turn.start": [field("session_id", "session"), field("prompt", "prompt")],
  "turn.cancel": [field("session_id", "session"), field("run_id", "opaque")],
  "approval.answer": [field("session_id", "session"), field("run_id", "opaque"), field("approval_id", "opaque"), field("allow", "allow"), field("scope", "scope", false, "approval.scope")],
  "model.catalog": PAGED,
  "model.catalog.status": [],
  "model.refresh": [field("provider", "opaque")],
  "selection.set": [
    field("session_id", "session"),
    field("selection_revision", "opaque"),
    field("catalog_revision", "opaque"),
    field("provider", "name"),
    field("model", "name"),
    field("effort", "effort", false),
  ],
  "operation.cancel": [field("id", "opaque")],
  "agent.info": [],
});

/**
 * The params fields of the required-only methods (`REQUIRED_ONLY_METHODS`),
 * as {@link PARAMS_FIELDS} spells a method's: each one's for certain, and,
 * as the kit first exported it, any string may index it.
 */
export const REQUIRED_ONLY_FIELDS: Readonly<Record<string, readonly FieldSpec[]>> & { readonly [M in RequiredOnlyMethod]: readonly FieldSpec[] } = Object.freeze({
  "session.rewind.preview": [field("session_id", "session"), field("revision", "opaque"), field("message_id", "opaque")],
  "session.rewind": [field("session_id", "session"), field("revision", "opaque"), field("message_id", "opaque"), field("restore_files", "allow")],
});

/** Whether `method` takes paged params, where revision and cursor are both null/omitted or both set. */
export function isPaged(method: KitMethod): boolean {
  return PARAMS_FIELDS[method] === PAGED;
}

const SESSION_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

/**
 * A session id in the spec's grammar, `[A-Za-z0-9_-]` at most 64 bytes:
 * every length, with 1, 63 and 64 favoured. Unlike {@link identifier} it
 * never holds `.`, so a fuzzer can tell the two grammars apart.
 */
export function sessionId(): fc.Arbitrary<string> {
  return boundedId(SESSION_CHARS);
}

/** Repeats `unit` until the text has exactly `bytes` UTF-8 bytes (every unit here is 1 byte or divides the rest). */
function fill(units: readonly string[], bytes: number): string {
  const encoder = new TextEncoder();
  let text = "";
  for (let index = 0; encoder.encode(text).length < bytes; index++) {
    const unit = units[index % units.length]!;
    text += encoder.encode(text + unit).length <= bytes ? unit : "a";
  }
  return text;
}

const NAME_UNITS = ["a", "Z", "0", "-", ".", "/", ":", " ", "é", "日", "😀"] as const;

/**
 * A `selection.set` provider or model name the spec admits: 1–256 UTF-8
 * bytes, well-formed, no control character. Short names, and names of
 * exactly 256 bytes built from 1- to 4-byte characters, so that the byte
 * bound and the UTF-16 length disagree. Never credential-shaped: the server
 * refuses a name that looks like a token as unsafe (`invalid_params`), and
 * a 256-byte run of letters and digits does, so the long names hold no
 * digit (short ones stay under the 32-character token run).
 */
export function selectionName(): fc.Arbitrary<string> {
  const unit = fc.constantFrom(...NAME_UNITS);
  const letterUnit = fc.constantFrom(...NAME_UNITS.filter((text) => !/[0-9]/.test(text)));
  return fc.oneof(
    fc.constantFrom("ollama", "qwen", "gpt-5", "claude-opus-4-7", "a"),
    fc.string({ unit, minLength: 1, maxLength: 16 }),
    fc.array(letterUnit, { minLength: 1, maxLength: 4 }).map((units) => fill(units, LIMITS.name_bytes)),
  );
}

/** The efforts `{ "mode": "set" }` takes; `default` is a mode of its own. */
export const SET_EFFORT_VALUES: readonly string[] = Object.freeze(["low", "medium", "high", "xhigh", "max"]);

/** One of the three effort request objects `selection.set` admits: keep, default, or set with one of the five efforts. */
export function effortRequest(): fc.Arbitrary<Record<string, string>> {
  return fc.oneof(
    fc.constant({ mode: "keep" }),
    fc.constant({ mode: "default" }),
    fc.constantFrom(...SET_EFFORT_VALUES).map((value) => ({ mode: "set", value })),
  );
}

/**
 * A valid `required_capabilities` list: distinct method names, none to all
 * sixteen (the bound), with the empty and the full list favoured.
 */
export function capabilityList(methods: readonly string[]): fc.Arbitrary<string[]> {
  return fc.oneof(
    fc.constant<string[]>([]),
    fc.constant<string[]>([...methods]),
    fc.uniqueArray(fc.constantFrom(...methods), { maxLength: LIMITS.required_capabilities }),
  );
}

/** A valid value of `kind` (for `capabilities`, a list from `methods`). */
export function validValue(kind: FieldKind, methods: readonly string[]): fc.Arbitrary<unknown> {
  switch (kind) {
    case "session":
      return sessionId();
    case "opaque":
      return identifier();
    case "nullable-opaque":
      return fc.oneof(fc.constant(null), identifier());
    case "limit":
      return fc.oneof(fc.constantFrom(1, LIMITS.discovery_page_entries), fc.integer({ min: 1, max: LIMITS.discovery_page_entries }));
    case "prompt":
      return fc.oneof(prompt().filter((sample) => sample.valid).map((sample) => sample.text), fc.constantFrom(...INVISIBLE_NON_SPACE, "\u0085a"));
    case "allow":
      return fc.boolean();
    case "name":
      return selectionName();
    case "effort":
      return effortRequest();
    case "capabilities":
      return capabilityList(methods);
    case "scope":
      return fc.constantFrom("once", "session");
  }
}
