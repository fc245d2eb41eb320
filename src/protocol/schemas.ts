/**
 * Valibot schemas for the params of every implemented method. Schemas are
 * strict: unknown fields are `invalid_params`. Params objects come from the
 * strict parser as null-prototype records, so only own keys are ever seen.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import type { Bool, Exact, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { IDENTIFIER_PATTERN, SESSION_ID_PATTERN } from "./identity.ts";
import { LIMITS } from "./limits.ts";

/** A capability name: the identifier grammar. */
export const CapabilityNameSchema: Pattern = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** `initialize` params: exactly `{ required_capabilities: [name, …] }`, at most 16 distinct names. */
export const InitializeParamsSchema: Exact<{
  required_capabilities: v.SchemaWithPipe<
    readonly [v.ArraySchema<Pattern, undefined>, v.MaxLengthAction<string[], typeof LIMITS.required_capabilities, undefined>, v.CheckAction<string[], undefined>]
  >;
}> = exactObject({
  required_capabilities: v.pipe(
    v.array(CapabilityNameSchema),
    v.maxLength(LIMITS.required_capabilities),
    v.check((names) => new Set(names).size === names.length),
  ),
});

/** The output of {@link InitializeParamsSchema}. */
export type InitializeParams = v.InferOutput<typeof InitializeParamsSchema>;

/** Params of methods that take none: exactly `{}`. */
export const EmptyParamsSchema: Exact<Record<never, never>> = exactObject({});

/** An opaque id the backend issued (revision, cursor, run, approval): the 64-byte identifier grammar. */
export const OpaqueIdSchema: Pattern = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** A session id: the identifier grammar without `.`, so it is a safe file-name stem. */
export const SessionIdSchema: Pattern = v.pipe(v.string(), v.regex(SESSION_ID_PATTERN));

/** `session.open` params: exactly `{ session_id }`. */
export const SessionOpenParamsSchema: Exact<{ session_id: Pattern }> = exactObject({ session_id: SessionIdSchema });

/** `history.page` params: `{ session_id, revision, cursor? }`, cursor null or omitted to start. */
export const HistoryPageParamsSchema: Exact<{
  session_id: Pattern;
  revision: Pattern;
  cursor: v.ExactOptionalSchema<v.NullableSchema<Pattern, undefined>, undefined>;
}> = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  cursor: v.exactOptional(v.nullable(OpaqueIdSchema)),
});

/** The output of {@link HistoryPageParamsSchema}. */
export type HistoryPageParams = v.InferOutput<typeof HistoryPageParamsSchema>;

/**
 * A prompt: at most `prompt_bytes` UTF-8 bytes with at least one character
 * that is not whitespace, which the spec leaves to Unicode: the White_Space
 * property. Not JavaScript's `\s`, which misses U+0085 (NEL) and counts
 * U+FEFF (a format character) as space.
 */
const PromptSchema: v.SchemaWithPipe<readonly [Str, v.MaxBytesAction<string, typeof LIMITS.prompt_bytes, undefined>, v.CheckAction<string, undefined>]> = v.pipe(
  v.string(),
  v.maxBytes(LIMITS.prompt_bytes),
  v.check((prompt) => /\P{White_Space}/u.test(prompt)),
);

/** `turn.start` params: exactly `{ session_id, prompt }`. */
export const TurnStartParamsSchema: Exact<{ session_id: Pattern; prompt: typeof PromptSchema }> = exactObject({ session_id: SessionIdSchema, prompt: PromptSchema });

/** The output of {@link TurnStartParamsSchema}. */
export type TurnStartParams = v.InferOutput<typeof TurnStartParamsSchema>;

/** `turn.cancel` params: exactly `{ session_id, run_id }`. */
export const TurnCancelParamsSchema: Exact<{ session_id: Pattern; run_id: Pattern }> = exactObject({ session_id: SessionIdSchema, run_id: OpaqueIdSchema });

/** The output of {@link TurnCancelParamsSchema}. */
export type TurnCancelParams = v.InferOutput<typeof TurnCancelParamsSchema>;

/** The scopes an answer may apply to (the negotiated `approval.scope` extension). */
export const ApprovalScopeSchema: OneOf<["once", "session"]> = v.picklist(["once", "session"]);

/**
 * `approval.answer` params: exactly `{ session_id, run_id, approval_id, allow }`,
 * plus `scope` for a client that negotiated `approval.scope` (a base
 * client's `scope` is refused as an unknown field: see `server.ts`).
 */
export const ApprovalAnswerParamsSchema: Exact<{
  session_id: Pattern;
  run_id: Pattern;
  approval_id: Pattern;
  allow: Bool;
  scope: v.ExactOptionalSchema<OneOf<["once", "session"]>, undefined>;
}> = exactObject({
  session_id: SessionIdSchema,
  run_id: OpaqueIdSchema,
  approval_id: OpaqueIdSchema,
  allow: v.boolean(),
  scope: v.exactOptional(ApprovalScopeSchema),
});

/** The output of {@link ApprovalAnswerParamsSchema}. */
export type ApprovalAnswerParams = v.InferOutput<typeof ApprovalAnswerParamsSchema>;

/** The fields of paged params (discovery and the model catalog). */
type PagedEntries = {
  revision: v.ExactOptionalSchema<v.NullableSchema<Pattern, undefined>, undefined>;
  cursor: v.ExactOptionalSchema<v.NullableSchema<Pattern, undefined>, undefined>;
  limit: v.ExactOptionalSchema<
    v.SchemaWithPipe<
      readonly [
        v.NumberSchema<undefined>,
        v.IntegerAction<number, undefined>,
        v.MinValueAction<number, 1, undefined>,
        v.MaxValueAction<number, number, undefined>,
      ]
    >,
    undefined
  >;
};

/** The schema type of paged params (explicit for JSR's no-slow-types). */
export type PagedParams = v.SchemaWithPipe<readonly [Exact<PagedEntries>, v.CheckAction<v.InferOutput<Exact<PagedEntries>>, undefined>]>;

/**
 * Paged params (`session.list`, `session.discover`, `model.catalog`): `{ revision?, cursor?, limit? }`, each optional,
 * limit an integer from 1 to `maxLimit`. Revision and cursor are both null
 * (or omitted) for a fresh request, or both set for a continuation; one
 * without the other is `invalid_params`.
 */
export const pagedParams = (maxLimit: number): PagedParams =>
  v.pipe(
    exactObject({
      revision: v.exactOptional(v.nullable(OpaqueIdSchema)),
      cursor: v.exactOptional(v.nullable(OpaqueIdSchema)),
      limit: v.exactOptional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(maxLimit))),
    }),
    v.check((params) => ((params.revision ?? null) === null) === ((params.cursor ?? null) === null)),
  );

/** `session.list` params, limit up to `discovery_page_entries`. */
export const SessionListParamsSchema: PagedParams = pagedParams(LIMITS.discovery_page_entries);

/** The output of {@link SessionListParamsSchema}. */
export type SessionListParams = v.InferOutput<typeof SessionListParamsSchema>;

/** `session.discover` params: those of `session.list`, limit up to `discover_page_entries`. */
export const SessionDiscoverParamsSchema: PagedParams = pagedParams(LIMITS.discover_page_entries);

/** `operation.cancel` params: exactly `{ id }`, a request id of this child. */
export const OperationCancelParamsSchema: Exact<{ id: Pattern }> = exactObject({ id: v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN)) });

/** The output of {@link OperationCancelParamsSchema}. */
export type OperationCancelParams = v.InferOutput<typeof OperationCancelParamsSchema>;

/** `session.rewind.preview` params: the attached session, its current history revision, and a user message of that revision. */
export const SessionRewindPreviewParamsSchema: Exact<{ session_id: Pattern; revision: Pattern; message_id: Pattern }> = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  message_id: OpaqueIdSchema,
});

/** `session.rewind` params: those of the preview, and whether to restore the files the dropped turns changed. */
export const SessionRewindParamsSchema: Exact<{ session_id: Pattern; revision: Pattern; message_id: Pattern; restore_files: Bool }> = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  message_id: OpaqueIdSchema,
  restore_files: v.boolean(),
});

/** The output of {@link SessionRewindParamsSchema}. */
export type SessionRewindParams = v.InferOutput<typeof SessionRewindParamsSchema>;
