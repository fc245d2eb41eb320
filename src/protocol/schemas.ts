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

/** The one extension capability that raises the name bound and comes with `client_tools`. */
const CLIENT_TOOLS = "client.tools";

/** The most names `required_capabilities` may hold when it lists `client.tools` (the spec's rule). */
export const MAX_CAPABILITIES_WITH_CLIENT_TOOLS = 18;

type InitializeEntries = {
  required_capabilities: v.SchemaWithPipe<
    readonly [v.ArraySchema<Pattern, undefined>, v.MaxLengthAction<string[], typeof MAX_CAPABILITIES_WITH_CLIENT_TOOLS, undefined>, v.CheckAction<string[], undefined>]
  >;
  client_tools: v.ExactOptionalSchema<v.ArraySchema<v.UnknownSchema, undefined>, undefined>;
};

/**
 * `initialize` params: `{ required_capabilities: [name, …] }`, at most 16
 * distinct names; with `client.tools` among them, also `client_tools` (and
 * then at most 18 names), which is allowed only then. The tools themselves
 * are checked by `client-tool-registry.ts`, which preflight loads only for a
 * request that sends them (docs/features/local-agent-client-tools.md).
 */
export const InitializeParamsSchema: v.SchemaWithPipe<readonly [Exact<InitializeEntries>, v.CheckAction<v.InferOutput<Exact<InitializeEntries>>, undefined>]> = v.pipe(
  exactObject({
    required_capabilities: v.pipe(
      v.array(CapabilityNameSchema),
      v.maxLength(MAX_CAPABILITIES_WITH_CLIENT_TOOLS),
      v.check((names) => new Set(names).size === names.length),
    ),
    client_tools: v.exactOptional(v.array(v.unknown())),
  }),
  v.check((params) => {
    const negotiates = params.required_capabilities.includes(CLIENT_TOOLS);
    return negotiates === (params.client_tools !== undefined) && (negotiates || params.required_capabilities.length <= LIMITS.required_capabilities);
  }),
);

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

/**
 * `client.tool.result` params: exactly `{ session_id, run_id, call_id, ok, output }`, output at most 61,440
 * UTF-8 bytes: what is left of the 65,536-byte input frame for it once the envelope and ids are written.
 */
export const ClientToolResultParamsSchema: Exact<{
  session_id: Pattern;
  run_id: Pattern;
  call_id: Pattern;
  ok: Bool;
  output: v.SchemaWithPipe<readonly [Str, v.MaxBytesAction<string, 61_440, undefined>]>;
}> = exactObject({
  session_id: SessionIdSchema,
  run_id: OpaqueIdSchema,
  call_id: OpaqueIdSchema,
  ok: v.boolean(),
  // The registry's MAX_RESULT_OUTPUT_BYTES, spelled here so start-up does not load the registry module.
  output: v.pipe(v.string(), v.maxBytes(61_440)),
});

/**
 * `agent.info` params: exactly `{}`. With `client.tool.result`'s here, not
 * beside its result (`agent-info.ts`), so the dispatcher holds every
 * extension request's params at startup without loading any result.
 */
export const AgentInfoParamsSchema: typeof EmptyParamsSchema = EmptyParamsSchema;

/** The output of {@link ClientToolResultParamsSchema}. */
export type ClientToolResultParams = v.InferOutput<typeof ClientToolResultParamsSchema>;

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
