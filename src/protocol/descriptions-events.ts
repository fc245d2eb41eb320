/**
 * Descriptions of the frame envelopes and of every run event's data
 * (`docs/schema/events/`), from the spec's framing section and its event
 * table. See `describe.ts` for why they are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import { ErrorResponseSchema, EventFrameSchema, RequestFrameSchema, ResultResponseSchema } from "./envelopes.ts";
import { ErrorCode } from "./errors.ts";
import {
  ActivitySchema,
  ApprovalRequestedSchema,
  ApprovalResolvedSchema,
  DiagnosticSchema,
  InputPersistedSchema,
  MessageDeltaSchema,
  MessageReconcileSchema,
  RunFinishedSchema,
  RunUsageSchema,
  ClientToolCallSchema,
  ClientToolCancelSchema,
} from "./events.ts";

const IDENTITY = { protocol: "Always `magi-code.local-agent`.", version: "The protocol version: always 1." };
const OUTPUT = {
  ...IDENTITY,
  instance_id: "This child's fresh UUID; every ephemeral id is scoped to it.",
  seq: "This frame's number among all output frames of the child: from 1, strictly increasing.",
};
const ABSENT = "Never present: a response holds exactly one of `result` and `error`.";
const SCOPE = { session_id: "The run's session.", run_id: "The run this event belongs to." };

/** Descriptions of the envelopes and of every event's data. */
export const EVENT_DESCRIPTIONS: Descriptions = new Map([
  ...RequestFrameSchema.options.map((option) => {
    const method = option.entries.method.literal;
    return describe(option, `A \`${method}\` request frame: exactly these five fields.`, {
      ...IDENTITY,
      id: "The request's id: 1-64 bytes of `[A-Za-z0-9._-]`, never reused within one child. Its response carries it back.",
      method: `\`${method}\`.`,
      params: `\`${method}\`'s params (also published alone as params/${method}.schema.json).`,
    });
  }),
  describe(ResultResponseSchema, "A success response. Its `result` is the result of the request with this `id`: validate it with results/<method>.schema.json of the method sent.", {
    ...OUTPUT,
    type: "Always `response`.",
    id: "The id of the request this answers.",
    result: "The method's result. A client may ignore fields it does not know.",
    error: ABSENT,
  }),
  describe(ErrorResponseSchema, "An error response: a code only, never submitted text or underlying exceptions.", {
    ...OUTPUT,
    type: "Always `response`.",
    id: "The id of the request this answers; null when the request's identity could not be recovered.",
    error: "The error.",
    result: ABSENT,
  }),
  describe(ErrorResponseSchema.entries.error, "A wire error.", {
    code: "The error code (docs/protocol.md); a client fails closed on a code it does not know.",
  }),
  ...EventFrameSchema.options.map((option) => {
    const event = option.entries.event.literal;
    return describe(option, `A \`${event}\` event frame.`, {
      ...OUTPUT,
      type: "Always `event`.",
      event: `\`${event}\`.`,
      data: `\`${event}\`'s data (also published alone as events/${event}.schema.json).`,
    });
  }),
  describe(InputPersistedSchema, "`input.persisted`: the prompt is stored; from now on the session id may be saved for a relaunch.", {
    ...SCOPE,
    message_id: "The stored prompt's message id, within `revision`.",
    durable: "Always true.",
    revision: "The history revision holding the prompt; page later history with `run.finished`'s revision instead.",
  }),
  describe(MessageDeltaSchema, "`message.delta`: best-effort streamed text of one assistant segment; deltas may be coalesced or dropped.", {
    ...SCOPE,
    message_id: "The assistant segment's id, scoped to the run.",
    part: "The delta's number within the message, from 0; a gap means deltas were dropped.",
    text: "Text to append to the displayed segment.",
  }),
  describe(MessageReconcileSchema, "`message.reconcile`: one authoritative part that replaces the segment's deltas.", {
    ...SCOPE,
    message_id: "The assistant segment's id, scoped to the run.",
    part: "The part's index, from 0; join the parts in order once `last_part` arrives.",
    text: "This part's text.",
    last_part: "Whether this part completes the message's reconciliation (not the run).",
    partial: "Whether the message is incomplete: the run failed or was cancelled during it.",
  }),
  describe(ActivitySchema, "`activity`: one state of a tool, subagent or compaction activity.", {
    ...SCOPE,
    activity_id: "The activity's id within the run; its later states carry it again.",
    kind: "What runs.",
    state: "`started`, then `completed` or `failed`.",
    name: "The tool's (or activity's) name.",
    summary: "A redacted summary, at most 1,024 UTF-8 bytes; never raw params or results.",
    card_id: "`tool.cards` only, on a tool call's first activity event: the id of the call's card (docs/features/local-agent-tool-cards.md).",
  }),
  describe(ApprovalRequestedSchema, "`approval.requested`: answer it with `approval.answer`, or it is denied when it expires.", {
    ...SCOPE,
    approval_id: "The approval's id, for `approval.answer`.",
    summary: "What would be allowed, redacted, at most 1,024 UTF-8 bytes.",
    expires_in_ms: "Milliseconds until the approval expires and is denied.",
    scopes: "With `approval.scope` negotiated only: the scopes `approval.answer` may name, `once` always, `session` when `scope_key` is set.",
    scope_key: "With `approval.scope` negotiated only: exactly what an allowing `session` answer grants for the rest of the session (the tool and its target as shown), or null when only `once` is offered.",
  }),
  describe(ApprovalResolvedSchema, "`approval.resolved` (negotiated with `approval.scope`): how one approval ended, exactly once per `approval.requested`.", {
    ...SCOPE,
    approval_id: "The approval's id, from its `approval.requested`.",
    outcome: "`allowed` or `denied` (the winning answer), `expired` (nobody answered in time), `cancelled` (the run was cancelled or the client went away), `superseded` (the question stopped mattering before an answer).",
  }),
  describe(DiagnosticSchema, "`diagnostic`: an advisory notice about the run.", {
    ...SCOPE,
    code: "An advisory code (an identifier, not a closed set).",
    summary: "A fixed, redacted summary for people, at most 1,024 UTF-8 bytes.",
  }),
  describe(RunUsageSchema, "`run.usage` (negotiated: only for a client that required the `run.usage` capability): what the run's provider requests cost in tokens and how full the model's context is; once per run that reached a provider, right before `run.finished`.", {
    ...SCOPE,
    input_tokens: "Prompt tokens of the run's provider requests, summed, cached ones included whatever the API; null when no request reported them.",
    output_tokens: "Output tokens of the run's provider requests, summed, reasoning included where the provider counts it there; null when none reported them.",
    cached_input_tokens: "Of `input_tokens`, those the provider served from its prompt cache; null when no request reported cache use.",
    reasoning_tokens: "Of `output_tokens`, the reasoning tokens; null when not reported.",
    session_input_tokens: "The session's prompt tokens so far, this run included: its stored `usage` records plus this run's.",
    session_output_tokens: "The session's output tokens so far, this run included.",
    context_window: "The selected model's context window in tokens, when this child knows it; else null.",
    context_used: "Prompt tokens (cached included) of the run's last provider request that reported them: how full the context was then; null when none did.",
  }),
  describe(ClientToolCallSchema, "`client.tool.call` (negotiated `client.tools`): run the client's registered tool; answer with `client.tool.result` within its `timeout_ms`.", {
    ...SCOPE,
    call_id: "The call's id, unique for the child's lifetime; the result names it with the session and run.",
    name: "The tool's registered name (not the model's `client__` name).",
    arguments: "The arguments the model sent, already valid against the registered `input_schema`.",
  }),
  describe(ClientToolCancelSchema, `\`client.tool.cancel\` (negotiated \`client.tools\`): the call ended without its result (timeout, turn cancel, shutdown, EOF); stop its work. A later result is \`${ErrorCode.staleToolCall}\`.`, {
    ...SCOPE,
    call_id: "The call that ended.",
  }),
  describe(RunFinishedSchema, "`run.finished`: the run's one terminal event, sent after its cleanup.", {
    ...SCOPE,
    outcome: "How the run ended.",
    persistence: "`durable` (everything stored), `degraded` (a later append failed) or `not_started` (the prompt was never stored).",
    revision: `The history revision for later \`history.page\` requests; null when the history cannot be paged: reopen the session (a history over the snapshot budget still pages \`${ErrorCode.historyLimit}\`).`,
    error_code: "The error code of a `failed` run; else null.",
  }),
]);
