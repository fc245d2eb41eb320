/**
 * Small valibot building blocks the result and event schemas share, in a
 * file of their own so those schema files need not import each other.
 *
 * @module
 */

import * as v from "valibot";
import type { Count, List } from "../util/schema-types.ts";

/** An array the receiver must not mutate; readonly so the server's frozen arrays satisfy it. */
export function list<const T extends v.GenericSchema>(item: T): List<T> {
  return v.pipe(v.array(item), v.readonly());
}

/** A JSON integer ≥ 0: counts, byte bounds, part numbers. */
export const CountSchema: Count = v.pipe(v.number(), v.integer(), v.minValue(0));

