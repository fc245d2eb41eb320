/**
 * Valibot schemas of every implemented method's `result`, the one definition
 * both sides use: the server's producers are type-checked against the inferred
 * types (`satisfies MethodResult<…>` where the result is built), the client
 * validates what it receives with the same schemas, and `docs/schema/` is
 * generated from them. Objects are `v.object`, not strict: the spec lets a
 * client ignore unknown additional result fields, so a newer server may add
 * one, while enums (`v.picklist`) stay closed because unknown enum semantics
 * must fail closed.
 *
 * @module
 */

import * as v from "valibot";
import { CardSchema, ToolCardsDescriptorSchema } from "./tool-cards.ts";
import { ErrorCode, type StartupErrorCode } from "./errors.ts";
import { DISCOVER_LIMIT_NAMES, type DiscoverLimitName, type Limits, LIMITS } from "./limits.ts";
import type { MethodName } from "./methods.ts";
import type { Bool, Count, List, Lit, Nullable, Obj, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { CountSchema, list } from "./schema-parts.ts";
import { CapabilityNameSchema, OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";
import { SessionRewindPreviewResultSchema, SessionRewindResultSchema } from "./rewind-schemas.ts";
import {
  ModelCatalogResultSchema,
  ModelCatalogStatusResultSchema,
  ModelRefreshResultSchema,
  SelectionObjectSchema,
  SelectionSetResultSchema,
} from "./selection-results.ts";

/** The startup codes, which `status.readiness` reports after a failed startup. */
export const STARTUP_ERROR_CODES: readonly [
  typeof ErrorCode.configurationInvalid,
  typeof ErrorCode.providerUnavailable,
  typeof ErrorCode.profileInvalid,
  typeof ErrorCode.mcpUnavailable,
  typeof ErrorCode.startupCancelled,
  typeof ErrorCode.startupFailed,
] = [
  ErrorCode.configurationInvalid,
  ErrorCode.providerUnavailable,
  ErrorCode.profileInvalid,
  ErrorCode.mcpUnavailable,
  ErrorCode.startupCancelled,
  ErrorCode.startupFailed,
] as const satisfies readonly StartupErrorCode[];

/** The `status` result, also the `status` member of `initialize`'s result. */
export const StatusResultSchema: Obj<{
  state: OneOf<["starting", "idle", "running", "failed"]>;
  readiness: OneOf<["initializing", "ready", ...typeof STARTUP_ERROR_CODES]>;
  provider: Nullable<Str>;
  model: Nullable<Str>;
  context_id: Nullable<Str>;
  session_id: Nullable<Pattern>;
  run_id: Nullable<Pattern>;
  selection: Nullable<typeof SelectionObjectSchema>;
}> = v.object({
  state: v.picklist(["starting", "idle", "running", "failed"]),
  readiness: v.picklist(["initializing", "ready", ...STARTUP_ERROR_CODES]),
  provider: v.nullable(v.string()),
  model: v.nullable(v.string()),
  context_id: v.nullable(v.string()),
  session_id: v.nullable(SessionIdSchema),
  run_id: v.nullable(OpaqueIdSchema),
  selection: v.nullable(SelectionObjectSchema),
});

/** The entries of {@link LimitsSchema}: `session.discover`'s bounds are optional, every other one required. */
export type LimitsEntries = { readonly [K in keyof Limits]: K extends DiscoverLimitName ? v.OptionalSchema<Count, undefined> : Count };

/**
 * The published bounds: every name of {@link LIMITS}, each a non-negative
 * integer; those of `session.discover` only when it was negotiated.
 */
export const LimitsSchema: Obj<LimitsEntries> = v.object(
  Object.fromEntries(
    Object.keys(LIMITS).map((name) => [name, (DISCOVER_LIMIT_NAMES as readonly string[]).includes(name) ? v.optional(CountSchema) : CountSchema]),
  ) as LimitsEntries,
);

/** One client tool in the `client.tools` descriptor. */
export const ClientToolEntrySchema: Obj<{ name: Str; model_name: Str; timeout_ms: Count }> = v.object({
  name: v.string(),
  model_name: v.string(),
  timeout_ms: CountSchema,
});

/** The `client.tools` descriptor (docs/features/local-agent-client-tools.md). */
export const ClientToolsDescriptorSchema: Obj<{ tools: List<typeof ClientToolEntrySchema>; max_output_bytes: Count }> = v.object({
  tools: list(ClientToolEntrySchema),
  max_output_bytes: CountSchema,
});

/**
 * `initialize`'s `extensions` (only for a client that negotiated an
 * extension with a descriptor): each negotiated extension's descriptor.
 */
export const ExtensionsSchema: Obj<{
  "tool.cards": v.ExactOptionalSchema<typeof ToolCardsDescriptorSchema, undefined>;
  "client.tools": v.ExactOptionalSchema<typeof ClientToolsDescriptorSchema, undefined>;
}> = v.object({
  "tool.cards": v.exactOptional(ToolCardsDescriptorSchema),
  "client.tools": v.exactOptional(ClientToolsDescriptorSchema),
});

/** `initialize`'s result: what the child serves, its bounds and its status. */
export const InitializeResultSchema: Obj<{
  capabilities: List<Pattern>;
  limits: typeof LimitsSchema;
  status: typeof StatusResultSchema;
  extensions: v.ExactOptionalSchema<typeof ExtensionsSchema, undefined>;
}> = v.object({
  capabilities: list(CapabilityNameSchema),
  limits: LimitsSchema,
  status: StatusResultSchema,
  extensions: v.exactOptional(ExtensionsSchema),
});

/** `client.tool.result`'s result (an extension request, so no entry of {@link RESULTS}). */
export const ClientToolResultResultSchema: Obj<{ accepted: Lit<true> }> = v.object({ accepted: v.literal(true) });

/** `shutdown`'s result. */
export const ShutdownResultSchema: Obj<{ state: Lit<"stopping"> }> = v.object({ state: v.literal("stopping") });

/** `session.create`'s result: a lazy handle, durable only after a turn's input append. */
export const SessionCreateResultSchema: Obj<{ session_id: Pattern; durable: Lit<false>; revision: Pattern; notices: List<Str> }> = v.object({
  session_id: SessionIdSchema,
  durable: v.literal(false),
  revision: OpaqueIdSchema,
  notices: list(v.string()),
});

/** `session.open`'s result: durable unless it reopened this child's lazy handle. */
export const SessionOpenResultSchema: Obj<{ session_id: Pattern; durable: Bool; revision: Pattern; notices: List<Str> }> = v.object({
  session_id: SessionIdSchema,
  durable: v.boolean(),
  revision: OpaqueIdSchema,
  notices: list(v.string()),
});

/** What a history entry shows. */
export const HistoryKindSchema: OneOf<["user", "assistant", "reasoning_summary", "activity", "compaction", "diagnostic"]> = v.picklist(["user", "assistant", "reasoning_summary", "activity", "compaction", "diagnostic"]);

/** One part of one projected message in a `history.page` result. */
export const HistoryEntrySchema: Obj<{
  message_id: Pattern;
  kind: typeof HistoryKindSchema;
  text: Str;
  partial: Bool;
  part: Count;
  last_part: Bool;
  card: v.ExactOptionalSchema<v.NullableSchema<typeof CardSchema, undefined>, undefined>;
}> = v.object({
  message_id: OpaqueIdSchema,
  kind: HistoryKindSchema,
  text: v.string(),
  partial: v.boolean(),
  part: CountSchema,
  last_part: v.boolean(),
  card: v.exactOptional(v.nullable(CardSchema)),
});

/** `history.page`'s result: follow `next_cursor`, not the entry count. */
export const HistoryPageResultSchema: Obj<{
  session_id: Pattern;
  revision: Pattern;
  entries: List<typeof HistoryEntrySchema>;
  next_cursor: Nullable<Pattern>;
  complete: Bool;
}> = v.object({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  entries: list(HistoryEntrySchema),
  next_cursor: v.nullable(OpaqueIdSchema),
  complete: v.boolean(),
});

/** `turn.start`'s result: admission only, not persisted input or success. */
export const TurnStartResultSchema: Obj<{ run_id: Pattern; accepted: Lit<true> }> = v.object({ run_id: OpaqueIdSchema, accepted: v.literal(true) });

/** `turn.cancel`'s and `operation.cancel`'s result: a request; the cancelled work still answers for itself. */
export const TurnCancelResultSchema: Obj<{ cancellation_requested: Lit<true> }> = v.object({ cancellation_requested: v.literal(true) });

/** `approval.answer`'s result for the one winning answer. */
export const ApprovalAnswerResultSchema: Obj<{ recorded: Lit<true> }> = v.object({ recorded: v.literal(true) });

/**
 * One `session.list` entry. `eligibility` is spelled through the code table
 * for `busy`, the one word it shares with the error codes.
 */
export const SessionListEntrySchema: Obj<{
  session_id: Pattern;
  title: Nullable<Str>;
  updated_at: Nullable<Str>;
  eligibility: OneOf<["available", "cwd_unverified", typeof ErrorCode.busy]>;
  notices: List<Str>;
}> = v.object({
  session_id: SessionIdSchema,
  title: v.nullable(v.string()),
  updated_at: v.nullable(v.string()),
  eligibility: v.picklist(["available", "cwd_unverified", ErrorCode.busy]),
  notices: list(v.string()),
});

/** `session.list`'s result: one page of the child's discovery snapshot. */
export const SessionListResultSchema: Obj<{
  revision: Pattern;
  sessions: List<typeof SessionListEntrySchema>;
  next_cursor: Nullable<Pattern>;
  complete: Bool;
  notices: List<Str>;
}> = v.object({
  revision: OpaqueIdSchema,
  sessions: list(SessionListEntrySchema),
  next_cursor: v.nullable(OpaqueIdSchema),
  complete: v.boolean(),
  notices: list(v.string()),
});

/** One `session.discover` entry: a `session.list` entry plus whether the pass may still revise it. */
export const SessionDiscoverEntrySchema: Obj<{
  session_id: Pattern;
  title: Nullable<Str>;
  updated_at: Nullable<Str>;
  eligibility: OneOf<["available", "cwd_unverified", typeof ErrorCode.busy]>;
  notices: List<Str>;
  provisional: Bool;
}> = v.object({ ...SessionListEntrySchema.entries, provisional: v.boolean() });

/** `session.discover`'s result: one page of the child's incremental discovery pass. */
export const SessionDiscoverResultSchema: Obj<{
  revision: Pattern;
  sessions: List<typeof SessionDiscoverEntrySchema>;
  next_cursor: Nullable<Pattern>;
  complete: Bool;
  phase: OneOf<["walk", "verify"]>;
  verified_after: Nullable<Pattern>;
  verified_through: Nullable<Pattern>;
  notices: List<Str>;
}> = v.object({
  revision: OpaqueIdSchema,
  sessions: list(SessionDiscoverEntrySchema),
  next_cursor: v.nullable(OpaqueIdSchema),
  complete: v.boolean(),
  phase: v.picklist(["walk", "verify"]),
  verified_after: v.nullable(SessionIdSchema),
  verified_through: v.nullable(SessionIdSchema),
  notices: list(v.string()),
});

/** Method name → result schema, for every implemented method (the keys must equal `METHODS`'). */
export const RESULTS = {
  "initialize": InitializeResultSchema,
  "status": StatusResultSchema,
  "shutdown": ShutdownResultSchema,
  "session.create": SessionCreateResultSchema,
  "session.open": SessionOpenResultSchema,
  "history.page": HistoryPageResultSchema,
  "turn.start": TurnStartResultSchema,
  "turn.cancel": TurnCancelResultSchema,
  "approval.answer": ApprovalAnswerResultSchema,
  "session.list": SessionListResultSchema,
  "session.discover": SessionDiscoverResultSchema,
  "operation.cancel": TurnCancelResultSchema,
  "model.catalog": ModelCatalogResultSchema,
  "model.catalog.status": ModelCatalogStatusResultSchema,
  "model.refresh": ModelRefreshResultSchema,
  "selection.set": SelectionSetResultSchema,
  "session.rewind.preview": SessionRewindPreviewResultSchema,
  "session.rewind": SessionRewindResultSchema,
} as const satisfies { readonly [M in MethodName]: v.GenericSchema };

/** The result of method `M`, inferred from its schema. */
export type MethodResult<M extends MethodName> = v.InferOutput<(typeof RESULTS)[M]>;

/** The `status` result. */
export type StatusResult = MethodResult<"status">;
/** The `initialize` result. */
export type InitializeResult = MethodResult<"initialize">;
/** One `history.page` entry. */
export type HistoryEntry = v.InferOutput<typeof HistoryEntrySchema>;
