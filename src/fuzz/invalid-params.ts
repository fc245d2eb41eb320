/**
 * Invalid params for every method of protocol version 1, each paired with
 * the code the spec requires (`invalid_params`, whatever the phase and the
 * negotiation: params are checked first) and labelled with the rule it
 * breaks. Each one is a valid request with exactly one defect, so a child
 * that skipped that one check would act on it. Params travel as JSON text,
 * because the duplicate-key defects cannot be a JavaScript value.
 *
 * @module
 */

import fc from "fast-check";
import { ErrorCode } from "../protocol/errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
import { type Defect, defectsOf } from "./defects.ts";
import { type FieldSpec, isPaged, PARAMS_FIELDS, validValue } from "./fields.ts";
import { type KitMethod, WIRE_METHODS } from "./methods.ts";
import { type ParamsContext, validParams } from "./params.ts";
import { identifier } from "./text.ts";

/** Invalid params of one method and the response they must get. */
export interface InvalidParams {
  readonly method: KitMethod;
  /** The params as JSON text; send this (see {@link paramsFrameBytes}), not `params`, or a duplicate key is lost. */
  readonly json: string;
  /** `JSON.parse(json)`, for reading (a duplicate key keeps its last value). */
  readonly params: unknown;
  /** The code the response must carry, with the request's id. */
  readonly code: ErrorCode;
  /** Which rule the params break, for reports. */
  readonly label: string;
}

const encoder = new TextEncoder();

/** The request frame, LF included, of `method` with params given as JSON text: how {@link InvalidParams} are sent. */
export function paramsFrameBytes(id: string, method: string, json: string): Uint8Array {
  return encoder.encode(`{"protocol":${JSON.stringify(PROTOCOL)},"version":${PROTOCOL_VERSION},"id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":${json}}\n`);
}

type Entries = readonly (readonly [string, string])[];

const objectJson = (entries: Entries): string => `{${entries.map(([name, json]) => `${JSON.stringify(name)}:${json}`).join(",")}}`;
const entriesOf = (params: Record<string, unknown>): Entries => Object.entries(params).map(([name, value]) => [name, JSON.stringify(value)] as const);

function sample(method: KitMethod, label: string, json: string): InvalidParams {
  const value = {
    method,
    json,
    params: JSON.parse(json) as unknown,
    code: ErrorCode.invalidParams,
    label,
    [fc.toStringMethod]: () => `InvalidParams(${JSON.stringify(label)} → ${ErrorCode.invalidParams}: ${method} ${json.length <= 200 ? json : `${json.slice(0, 200)}…`})`,
  };
  return value as InvalidParams;
}

const NOT_OBJECTS: readonly Defect[] = [
  { label: "params null", json: "null" },
  { label: "params an array", json: "[]" },
  { label: "params a string", json: '"{}"' },
  { label: "params a number", json: "0" },
  { label: "params true", json: "true" },
];

/** Field names no method has: plain, prototype names, and near misses of real names (case, camelCase, padding). */
function unknownNames(fields: readonly FieldSpec[]): readonly string[] {
  const near = fields.flatMap(({ name }) => [name.toUpperCase(), `${name[0]!.toUpperCase()}${name.slice(1)}`, name.replace(/_(.)/g, (_, char: string) => char.toUpperCase()), `${name} `]);
  return [...new Set(["x", "__proto__", "constructor", "toString", "hasOwnProperty", "params", ...near])].filter((name) => !fields.some((spec) => spec.name === name));
}

/** Every required field present with a valid value (context first), optional ones from {@link validParams}' choice. */
function baseEntries(method: KitMethod, context: ParamsContext, negotiated: readonly string[]): fc.Arbitrary<Entries> {
  return validParams(method, context, negotiated).map(entriesOf);
}

function replaced(entries: Entries, name: string, json: string): Entries {
  return entries.some(([key]) => key === name) ? entries.map(([key, value]) => [key, key === name ? json : value] as const) : [...entries, [name, json] as const];
}

/** One field of `fields` made invalid: a defect of its kind in its place (an optional field is added with it). */
function fieldDefect(method: KitMethod, fields: readonly FieldSpec[], context: ParamsContext, negotiated: readonly string[]): fc.Arbitrary<InvalidParams> {
  return fc.constantFrom(...fields).chain((spec) =>
    fc.tuple(baseEntries(method, context, negotiated), defectsOf(spec.kind, spec.kind === "nullable-opaque")).map(([entries, bad]) =>
      sample(method, `${spec.name}: ${bad.label}`, objectJson(replaced(entries, spec.name, bad.json)))
    )
  );
}

/** Paged params with revision and cursor half set: one nonnull, the other null or omitted. */
function halfPaged(method: KitMethod): fc.Arbitrary<InvalidParams> {
  return fc.tuple(identifier(), fc.constantFrom("revision", "cursor"), fc.boolean(), fc.option(fc.constantFrom(1, 100), { nil: undefined })).map(([id, set, nullOther, limit]) => {
    const other = set === "revision" ? "cursor" : "revision";
    const entries: [string, string][] = [[set, JSON.stringify(id)]];
    if (nullOther) entries.push([other, "null"]);
    if (limit !== undefined) entries.push(["limit", String(limit)]);
    return sample(method, `${set} without ${other} (${nullOther ? "null" : "omitted"})`, objectJson(entries));
  });
}

/**
 * Invalid params of `method`, each with its label and code: params that are
 * not an object; an unknown field (prototype names and near misses of real
 * names included); a duplicate field; a missing required field; each field
 * with each defect of its kind (wrong type, null where not allowed, off
 * grammar, 65 bytes, out-of-range or fractional limits, prompts over the
 * bound or blank, names over 256 bytes or with controls, every invalid
 * effort request object); for paged methods, revision and cursor half set;
 * an extension's field, valid or not, for a child that did not negotiate
 * `negotiated` its capability. The other fields hold valid values,
 * `context`'s where it has them.
 */
export function invalidParams(method: KitMethod, context: ParamsContext = {}, negotiated: readonly string[] = []): fc.Arbitrary<InvalidParams> {
  const fields = PARAMS_FIELDS[method];
  const required = fields.filter((spec) => spec.required);
  const unnegotiated = fields.filter((spec) => spec.extension !== undefined && !negotiated.includes(spec.extension));
  const cases: fc.Arbitrary<InvalidParams>[] = [
    fc.constantFrom(...NOT_OBJECTS).map((bad) => sample(method, bad.label, bad.json)),
    fc.tuple(baseEntries(method, context, negotiated), fc.constantFrom(...unknownNames(fields)), fc.constantFrom("1", "null", '"x"', "{}", "[]")).map(([entries, name, json]) =>
      sample(method, `unknown field ${JSON.stringify(name)}`, objectJson([...entries, [name, json]]))
    ),
  ];
  if (fields.length > 0) {
    cases.push(fieldDefect(method, fields, context, negotiated));
    const duplicable = fc.tuple(baseEntries(method, context, negotiated), fc.constantFrom(...fields), fc.nat()).map(([entries, spec, pick]) => {
      const present = entries.find(([name]) => name === spec.name) ?? entries[pick % Math.max(entries.length, 1)];
      return present === undefined ? null : sample(method, `duplicate field ${JSON.stringify(present[0])}`, objectJson([...entries, present]));
    }).filter((item): item is InvalidParams => item !== null);
    cases.push(duplicable);
  }
  if (required.length > 0) {
    cases.push(
      fc.tuple(baseEntries(method, context, negotiated), fc.constantFrom(...required)).map(([entries, spec]) =>
        sample(method, `missing ${spec.name}`, objectJson(entries.filter(([name]) => name !== spec.name)))
      ),
    );
  }
  if (isPaged(method)) cases.push(halfPaged(method));
  if (unnegotiated.length > 0) {
    cases.push(
      fc.tuple(baseEntries(method, context, negotiated), fc.constantFrom(...unnegotiated)).chain(([entries, spec]) =>
        validValue(spec.kind, []).map((value) => sample(method, `${spec.name} without ${spec.extension}`, objectJson(replaced(entries, spec.name, JSON.stringify(value)))))
      ),
    );
  }
  return fc.oneof(...cases);
}

/** {@link invalidParams} of any of the sixteen methods. */
export function invalidCall(context: ParamsContext = {}): fc.Arbitrary<InvalidParams> {
  return fc.constantFrom(...WIRE_METHODS).chain((method) => invalidParams(method, context));
}
