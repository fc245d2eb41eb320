/**
 * Valibot schemas for the params of every implemented method. Schemas are
 * strict: unknown fields are `invalid_params`. Params objects come from the
 * strict parser as null-prototype records, so only own keys are ever seen.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { IDENTIFIER_PATTERN, SESSION_ID_PATTERN } from "./identity.ts";
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

/** An opaque id the backend issued (revision, cursor): the 64-byte identifier grammar. */
const OpaqueIdSchema = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

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

/**
 * A prompt: at most `prompt_bytes` UTF-8 bytes with at least one character
 * that is not whitespace (JavaScript's `\s`, which covers Unicode spaces).
 */
const PromptSchema = v.pipe(
  v.string(),
  v.maxBytes(LIMITS.prompt_bytes),
  v.check((prompt) => /\S/u.test(prompt)),
);

/** `turn.start` params: exactly `{ session_id, prompt }`. */
export const TurnStartParamsSchema = exactObject({ session_id: SessionIdSchema, prompt: PromptSchema });

/** The output of {@link TurnStartParamsSchema}. */
export type TurnStartParams = v.InferOutput<typeof TurnStartParamsSchema>;

/** `turn.cancel` params: exactly `{ session_id, run_id }`. */
export const TurnCancelParamsSchema = exactObject({ session_id: SessionIdSchema, run_id: OpaqueIdSchema });

/** The output of {@link TurnCancelParamsSchema}. */
export type TurnCancelParams = v.InferOutput<typeof TurnCancelParamsSchema>;

/** `approval.answer` params: exactly `{ session_id, run_id, approval_id, allow }`. */
export const ApprovalAnswerParamsSchema = exactObject({
  session_id: SessionIdSchema,
  run_id: OpaqueIdSchema,
  approval_id: OpaqueIdSchema,
  allow: v.boolean(),
});

/** The output of {@link ApprovalAnswerParamsSchema}. */
export type ApprovalAnswerParams = v.InferOutput<typeof ApprovalAnswerParamsSchema>;

/**
 * Paged discovery params: `{ revision?, cursor?, limit? }`, each optional,
 * limit an integer from 1 to `maxLimit`. Revision and cursor are both null
 * (or omitted) for a fresh request, or both set for a continuation; one
 * without the other is `invalid_params`.
 */
const pagedDiscoveryParams = (maxLimit: number) =>
  v.pipe(
    exactObject({
      revision: v.exactOptional(v.nullable(OpaqueIdSchema)),
      cursor: v.exactOptional(v.nullable(OpaqueIdSchema)),
      limit: v.exactOptional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(maxLimit))),
    }),
    v.check((params) => ((params.revision ?? null) === null) === ((params.cursor ?? null) === null)),
  );

/** `session.list` params, limit up to `discovery_page_entries`. */
export const SessionListParamsSchema = pagedDiscoveryParams(LIMITS.discovery_page_entries);

/** The output of {@link SessionListParamsSchema}. */
export type SessionListParams = v.InferOutput<typeof SessionListParamsSchema>;

/** `session.discover` params: those of `session.list`, limit up to `discover_page_entries`. */
export const SessionDiscoverParamsSchema = pagedDiscoveryParams(LIMITS.discover_page_entries);

/** `operation.cancel` params: exactly `{ id }`, a request id of this child. */
export const OperationCancelParamsSchema = exactObject({ id: v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN)) });

/** The output of {@link OperationCancelParamsSchema}. */
export type OperationCancelParams = v.InferOutput<typeof OperationCancelParamsSchema>;
