/**
 * valibot's object schemas accept any `typeof x === "object"` input, arrays
 * included: `v.strictObject({})` takes `[]`. Every wire params object and
 * every settings section is built with {@link exactObject} instead, which
 * refuses arrays before the strict key check runs.
 *
 * @module
 */

import * as v from "valibot";
import type { Exact } from "./schema-types.ts";

/** Refuses arrays; put it first in a pipe in front of an object schema. */
export const notArray: v.CustomSchema<Record<string, unknown>, v.ErrorMessage<v.CustomIssue> | undefined> = v.custom<Record<string, unknown>>((input) => !Array.isArray(input), "Expected an object, not an array");

/** A strict object schema (unknown keys are issues) that also refuses arrays. */
export function exactObject<const TEntries extends v.ObjectEntries>(entries: TEntries): Exact<TEntries> {
  return v.pipe(notArray, v.strictObject(entries));
}
