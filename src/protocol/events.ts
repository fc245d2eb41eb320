/**
 * Valibot schemas of every run event's `data`, from the spec's event table:
 * the runner's `RunEvent` type is inferred from them, the client validates
 * each event it receives with them, and `docs/schema/events/` is generated
 * from them. Every event carries its run's scope (`session_id`, `run_id`) so
 * a client can tell a late event of an old run from the current run's.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCode } from "./errors.ts";
import { RESOLVED_APPROVAL_OUTCOMES } from "./approval-outcomes.ts";
import { IDENTIFIER_PATTERN } from "./identity.ts";
import type { JsonObject } from "./json-value.ts";
import type { Bool, Count, List, Lit, Nullable, Obj, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { CountSchema } from "./schema-parts.ts";
import { ApprovalScopeSchema, OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";
import { ToolCardSchema } from "./tool-cards.ts";

/** Every known wire error code, as a closed enum: an unknown one must fail closed. */
export const ErrorCodeSchema: OneOf<[ErrorCode, ...ErrorCode[]]> = v.picklist(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]);

/** The run an event belongs to. */
const scope: Scope = { session_id: SessionIdSchema, run_id: OpaqueIdSchema };

/** The entries every event data object starts with. */
type Scope = { readonly session_id: Pattern; readonly run_id: Pattern };

/** `input.persisted`: the prompt is durable; the session id may be saved from now on. */
export const InputPersistedSchema: Obj<Scope & { message_id: Pattern; durable: Lit<true>; revision: Pattern }> = v.object({ ...scope, message_id: OpaqueIdSchema, durable: v.literal(true), revision: OpaqueIdSchema });

/** `message.delta`: best-effort streamed text of one assistant segment. */
export const MessageDeltaSchema: Obj<Scope & { message_id: Pattern; part: Count; text: Str }> = v.object({ ...scope, message_id: OpaqueIdSchema, part: CountSchema, text: v.string() });

/** `message.reconcile`: one authoritative part that replaces the segment's deltas. */
export const MessageReconcileSchema: Obj<Scope & { message_id: Pattern; part: Count; text: Str; last_part: Bool; partial: Bool }> = v.object({
  ...scope,
  message_id: OpaqueIdSchema,
  part: CountSchema,
  text: v.string(),
  last_part: v.boolean(),
  partial: v.boolean(),
});

/**
 * `activity`: one state of a tool (or subagent, compaction) activity. The
 * first one of a tool call carries `card_id` for a client that negotiated
 * `tool.cards`, and no other ever does.
 */
export const ActivitySchema: Obj<
  Scope & {
    activity_id: Str;
    kind: OneOf<["tool", "subagent", "compaction"]>;
    state: OneOf<["started", "completed", "failed"]>;
    name: Str;
    summary: Str;
    card_id: v.ExactOptionalSchema<Pattern, undefined>;
  }
> = v.object({
  ...scope,
  activity_id: v.string(),
  kind: v.picklist(["tool", "subagent", "compaction"]),
  state: v.picklist(["started", "completed", "failed"]),
  name: v.string(),
  summary: v.string(),
  card_id: v.exactOptional(OpaqueIdSchema),
});

/**
 * `approval.requested`: answer with `approval.answer` within `expires_in_ms`,
 * or it is denied. `scopes` and `scope_key` come only with the negotiated
 * `approval.scope` (which a client accepts only when it required it).
 */
export const ApprovalRequestedSchema: Obj<
  Scope & {
    approval_id: Pattern;
    summary: Str;
    expires_in_ms: Count;
    scopes: v.ExactOptionalSchema<List<typeof ApprovalScopeSchema>, undefined>;
    scope_key: v.ExactOptionalSchema<Nullable<Str>, undefined>;
  }
> = v.object({
  ...scope,
  approval_id: OpaqueIdSchema,
  summary: v.string(),
  expires_in_ms: CountSchema,
  scopes: v.exactOptional(v.pipe(v.array(ApprovalScopeSchema), v.readonly())),
  scope_key: v.exactOptional(v.nullable(v.string())),
});

/**
 * `approval.resolved` (negotiated with `approval.scope`): how one approval
 * ended, exactly once per `approval.requested`, from the one outcome
 * vocabulary (`approval-outcomes.ts`; never `not_asked`, which asks nobody).
 */
export const ApprovalResolvedSchema: Obj<Scope & { approval_id: Pattern; outcome: OneOf<typeof RESOLVED_APPROVAL_OUTCOMES> }> = v.object({
  ...scope,
  approval_id: OpaqueIdSchema,
  outcome: v.picklist(RESOLVED_APPROVAL_OUTCOMES),
});

/**
 * `diagnostic`: a fixed summary and a code. Diagnostic codes are advisory and
 * not a spec enum (the summary is what a person reads), so any identifier is
 * accepted rather than failing closed.
 */
export const DiagnosticSchema: Obj<Scope & { code: Pattern; summary: Str }> = v.object({ ...scope, code: v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN)), summary: v.string() });

/** `run.finished`: the one terminal event of a run. */
export const RunFinishedSchema: Obj<
  Scope & {
    outcome: OneOf<["completed", "cancelled", "failed"]>;
    persistence: OneOf<["durable", "degraded", "not_started"]>;
    revision: Nullable<Pattern>;
    error_code: Nullable<typeof ErrorCodeSchema>;
  }
> = v.object({
  ...scope,
  outcome: v.picklist(["completed", "cancelled", "failed"]),
  persistence: v.picklist(["durable", "degraded", "not_started"]),
  revision: v.nullable(OpaqueIdSchema),
  error_code: v.nullable(ErrorCodeSchema),
});

type Tokens = Nullable<Count>;

/**
 * `run.usage` (negotiated: only a client that required the `run.usage`
 * capability ever gets it, once per run that reached a provider, right
 * before `run.finished`): what the turn's provider requests cost in tokens,
 * the session's totals and how full the model's context is. A count the
 * provider did not report is null.
 */
export const RunUsageSchema: Obj<
  Scope & {
    input_tokens: Tokens;
    output_tokens: Tokens;
    cached_input_tokens: Tokens;
    reasoning_tokens: Tokens;
    session_input_tokens: Count;
    session_output_tokens: Count;
    context_window: Tokens;
    context_used: Tokens;
  }
> = v.object({
  ...scope,
  input_tokens: v.nullable(CountSchema),
  output_tokens: v.nullable(CountSchema),
  cached_input_tokens: v.nullable(CountSchema),
  reasoning_tokens: v.nullable(CountSchema),
  session_input_tokens: CountSchema,
  session_output_tokens: CountSchema,
  context_window: v.nullable(CountSchema),
  context_used: v.nullable(CountSchema),
});

/** `client.tool.call` (negotiated `client.tools`): run the client's registered tool `name` with `arguments`. */
export const ClientToolCallSchema: Obj<Scope & { call_id: Pattern; name: Str; arguments: v.CustomSchema<JsonObject, undefined> }> = v.object({
  ...scope,
  call_id: OpaqueIdSchema,
  name: v.string(),
  arguments: v.custom<JsonObject>((value) => typeof value === "object" && value !== null && !Array.isArray(value)),
});

/** `client.tool.cancel` (negotiated `client.tools`): the call ended without its result (timeout, cancel, shutdown, EOF). */
export const ClientToolCancelSchema: Obj<Scope & { call_id: Pattern }> = v.object({ ...scope, call_id: OpaqueIdSchema });

/**
 * Event name → data schema, for every event the spec defines and the
 * negotiated ones (`run.usage`, `tool.card`, `client.tool.call`,
 * `client.tool.cancel`), which a client accepts only when it required their
 * capability.
 */
export const EVENTS = {
  "input.persisted": InputPersistedSchema,
  "message.delta": MessageDeltaSchema,
  "message.reconcile": MessageReconcileSchema,
  "activity": ActivitySchema,
  "approval.requested": ApprovalRequestedSchema,
  "approval.resolved": ApprovalResolvedSchema,
  "diagnostic": DiagnosticSchema,
  "run.usage": RunUsageSchema,
  "client.tool.call": ClientToolCallSchema,
  "client.tool.cancel": ClientToolCancelSchema,
  "tool.card": ToolCardSchema,
  "run.finished": RunFinishedSchema,
} as const;

/** One event name. */
export type EventName = keyof typeof EVENTS;

/** The data of event `N`, inferred from its schema. */
export type EventData<N extends EventName> = v.InferOutput<(typeof EVENTS)[N]>;

/** One run event before framing: its name and data, discriminated by name. */
export type WireEvent = { readonly [N in EventName]: { readonly event: N; readonly data: EventData<N> } }[EventName];

/** Whether `name` is an event this protocol version defines; own keys only. */
export function isEventName(name: string): name is EventName {
  return Object.hasOwn(EVENTS, name);
}
