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

/** Session ids: 1–64 ASCII bytes of `[A-Za-z0-9_-]`, the store's file-name grammar. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** An opaque id the backend issued (revision, cursor): the 64-byte identifier grammar. */
const OpaqueIdSchema = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** A session id in params. */
const SessionIdSchema = v.pipe(v.string(), v.regex(SESSION_ID_PATTERN));

/** `session.open` params: exactly `{ session_id }`. */
export const SessionOpenParamsSchema = exactObject({ session_id: SessionIdSchema });

/** `history.page` params: `{ session_id, revision, cursor? }`, cursor null or omitted to start. */
export const HistoryPageParamsSchema = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  cursor: v.exactOptional(v.nullable(OpaqueIdSchema)),
});

/** The output of {@link HistoryPageParamsSchema}. */
export type HistoryPageParams = v.InferOutput<typeof HistoryPageParamsSchema>;
