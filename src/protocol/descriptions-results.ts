/**
 * Descriptions of the base methods' results (`docs/schema/results/`) and of
 * the objects inside them, from the spec's operation sections,
 * docs/protocol.md and the negotiated extensions. See `describe.ts` for why
 * they are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import { ErrorCode } from "./errors.ts";
import { LIMIT_DESCRIPTIONS } from "./descriptions-limits.ts";
import {
  ApprovalAnswerResultSchema,
  HistoryEntrySchema,
  HistoryPageResultSchema,
  ClientToolEntrySchema,
  ClientToolsDescriptorSchema,
  InitializeResultSchema,
  LimitsSchema,
  SessionCreateResultSchema,
  SessionDiscoverEntrySchema,
  SessionDiscoverResultSchema,
  SessionListEntrySchema,
  SessionListResultSchema,
  SessionOpenResultSchema,
  ShutdownResultSchema,
  StatusResultSchema,
  TurnCancelResultSchema,
  TurnStartResultSchema,
} from "./results.ts";

const NEXT = "The next page's cursor (send it with `revision`), or null on the last page.";
const NOTICES = "Advisory notice codes; a client may show or ignore them.";

/** The fields `session.list` and `session.discover` entries share. */
const ENTRY = {
  session_id: "The session's exact id, for `session.open`; also what to display when `title` is null.",
  title: "The stored title, sanitized (at most 50 characters); null when there is none. Never derived from a prompt.",
  updated_at: "When the latest durable event was recorded (UTC, RFC 3339); null for an empty history.",
  eligibility:
    `\`available\`; \`cwd_unverified\` (recorded without a workspace, so it cannot be checked against this one); or \`${ErrorCode.busy}\` (another child holds a lease on it: advisory, \`session.open\` decides).`,
  notices: "This entry's advisory notice codes (`cwd_unverified`).",
};

/** Descriptions of the base results and the objects inside them. */
export const RESULT_DESCRIPTIONS: Descriptions = new Map([
  describe(StatusResultSchema, "The child's state, readiness and selection, from memory: never a provider or catalog request.", {
    state: "`starting` while `initialize` runs; `idle`, or `running` while a run is active, once ready; `failed` after a failed startup.",
    readiness: "`initializing`; `ready` (configured locally, not proven remotely); or, after a failed startup, its error code.",
    provider: "The effective provider; null before readiness, or when the name is unsafe to show.",
    model: "The effective model; null before readiness, or when the name is unsafe to show.",
    context_id: "An opaque SHA-256 digest of the canonical workspace and storage root; null before readiness. Not a security boundary.",
    session_id: "The attached session's id, or null.",
    run_id: "The active run's id, or null.",
    selection: "The current selection with its revision; null before readiness and after a failed startup.",
  }),
  describe(LimitsSchema, "The bounds this child enforces (docs/protocol.md#limits); read them here at runtime rather than copying them.", LIMIT_DESCRIPTIONS),
  describe(InitializeResultSchema, "`initialize` result: what the child serves, its bounds, and its status once startup ended.", {
    capabilities: "Every method this child serves, sorted; a negotiated extension among them works only when `initialize` required it. `run.usage` is listed only when `initialize` required it.",
    limits: "The published bounds.",
    status: "The status once startup ended, as `status` returns it.",
    extensions: "Only for a client that negotiated an extension with a descriptor: each such extension's descriptor, by capability name.",
  }),
  describe(ClientToolsDescriptorSchema, "The `client.tools` descriptor.", {
    tools: "The registered tools, in registration order.",
    max_output_bytes: "The largest `output` a `client.tool.result` may carry, in UTF-8 bytes.",
  }),
  describe(ClientToolEntrySchema, "One registered client tool.", {
    name: "The registered name, as `client.tool.call` events and settings use it.",
    model_name: "The name the model calls it by: `client__` and the registered name.",
    timeout_ms: "How long the backend waits for one call's result.",
  }),
  describe(ShutdownResultSchema, "`shutdown` result: no later input is admitted; the child cancels its work, drains its output and exits.", {
    state: "Always `stopping`.",
  }),
  describe(SessionCreateResultSchema, "`session.create` result: a new lazy session, stored only once its first turn's prompt is (`input.persisted`) or a `selection.set` is.", {
    session_id: "The new session's id; save it for a relaunch only once it is durable.",
    durable: "Always false: nothing is stored yet.",
    revision: "The history revision, for `history.page`.",
    notices: NOTICES,
  }),
  describe(SessionOpenResultSchema, "`session.open` result: the session is attached to this child.", {
    session_id: "The attached session's id.",
    durable: "Whether the session is stored; false only when this reopened the child's own lazy handle.",
    revision: "The history revision, for `history.page`.",
    notices: "Advisory notice codes, such as `saved_selection_unavailable` when the saved provider/model cannot be restored.",
  }),
  describe(HistoryEntrySchema, "One part of one projected message.", {
    message_id: "The message's id, scoped to this session and revision.",
    kind: "What the message is.",
    text: "This part's text.",
    partial: "Whether the message is incomplete (a turn interrupted, failed or cancelled mid-reply).",
    part: "The part's index, from 0; join the contiguous parts of one message.",
    last_part: "Whether this is the message's last part.",
    card: "`tool.cards` only, on every activity entry: the call's saved card as its terminal snapshot left it, or null (none saved, or past `history_card_bytes`).",
  }),
  describe(HistoryPageResultSchema, "`history.page` result: one page of the projection, in stored order.", {
    session_id: "The paged session's id.",
    revision: "The revision this page belongs to.",
    entries: "The page's entries: follow `next_cursor`, not their count.",
    next_cursor: "The next page's cursor, or null on the last page.",
    complete: "True only on the last page of a complete projection (false after an interrupted turn).",
  }),
  describe(TurnStartResultSchema, "`turn.start` result: the run was admitted. Not that the prompt was stored, nor that the run will succeed.", {
    run_id: "The run's id; its events carry it.",
    accepted: "Always true.",
  }),
  describe(TurnCancelResultSchema, "`turn.cancel` and `operation.cancel` result: cancellation was requested; the cancelled work still ends with its own `run.finished` or response.", {
    cancellation_requested: "Always true.",
  }),
  describe(ApprovalAnswerResultSchema, "`approval.answer` result: this answer won and was recorded.", { recorded: "Always true." }),
  describe(SessionListEntrySchema, "One stored session of this workspace.", ENTRY),
  describe(SessionListResultSchema, "`session.list` result: one page of this child's discovery snapshot, ascending by session id.", {
    revision: "The snapshot's revision; send it with `next_cursor` for the next page.",
    sessions: "This page's sessions.",
    next_cursor: NEXT,
    complete: "True on the last page, when every eligible session of the snapshot was paged.",
    notices: "Advisory notice codes, such as `sessions_omitted_invalid` (unreadable histories were left out).",
  }),
  describe(SessionDiscoverEntrySchema, "One session of this workspace, as one `session.discover` page saw it.", {
    ...ENTRY,
    provisional: "True on walk pages (checked, but the pass may still revise it); false on verify pages, whose entries replace the provisional ones of their range.",
  }),
  describe(SessionDiscoverResultSchema, "`session.discover` result (negotiated): one page of this child's incremental discovery pass.", {
    revision: "The pass's revision; send it with `next_cursor` for the next page.",
    sessions: "This page's sessions, ascending by id.",
    next_cursor: NEXT,
    complete: "True only on the last verify page.",
    phase: "`walk` (provisional entries as they are found) or `verify` (the final entries).",
    verified_after: "On verify pages, the id after which the range this page settles starts (null: from the first id); null on walk pages.",
    verified_through: "On verify pages, the last id of that range (null: through the last id); null on walk pages.",
    notices: "Notice codes of this page's candidates (`sessions_omitted_invalid`, `sessions_omitted_limit`).",
  }),
]);
