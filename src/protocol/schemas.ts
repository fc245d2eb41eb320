/**
 * Valibot schemas for the params of every implemented method. Schemas are
 * strict: unknown fields are `invalid_params`. Params objects come from the
 * strict parser as null-prototype records, so only own keys are ever seen.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { IDENTIFIER_PATTERN } from "./identity.ts";
import { LIMITS } from "./limits.ts";

/** A capability name: the identifier grammar. */
export const CapabilityNameSchema = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** `initialize` params: exactly `{ required_capabilities: [name, …] }`, at most 16 distinct names. */
export const InitializeParamsSchema = exactObject({
  required_capabilities: v.pipe(
    v.array(CapabilityNameSchema),
    v.maxLength(LIMITS.required_capabilities),
    v.check((names) => new Set(names).size === names.length),
  ),
});

/** The output of {@link InitializeParamsSchema}. */
export type InitializeParams = v.InferOutput<typeof InitializeParamsSchema>;

/** Params of methods that take none: exactly `{}`. */
export const EmptyParamsSchema = exactObject({});
