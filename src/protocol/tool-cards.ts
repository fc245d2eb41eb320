/**
 * The wire side of the negotiated `tool.cards` extension
 * (`docs/features/local-agent-tool-cards.md`): the card of schema 1, the
 * `tool.card` event's data, the descriptor `initialize` returns under
 * `extensions`, and the card bounds it publishes. Loaded only by a child
 * whose client negotiated the extension, by the client library and by the
 * schema generator.
 *
 * @module
 */

import * as v from "valibot";
import { type ApprovalOutcome, ApprovalOutcomeSchema } from "./approval-outcomes.ts";
import { CountSchema } from "./schema-parts.ts";
import { OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";

/** The card schema version this build speaks. */
export const CARD_SCHEMA_VERSION = 1;

/** The card kinds this build produces, in the order the docs list them. */
export const CARD_KINDS = ["read", "write", "edit", "shell", "other"] as const;

/** One card kind. */
export type CardKind = typeof CARD_KINDS[number];

/** The bounds of cards, published in the descriptor (UTF-8 bytes). */
export const CARD_LIMITS: {
  readonly card_bytes: number;
  readonly diff_bytes: number;
  readonly output_head_bytes: number;
  readonly output_tail_bytes: number;
  readonly run_detail_bytes: number;
  readonly history_card_bytes: number;
} = Object.freeze({
  card_bytes: 16_384,
  diff_bytes: 8_192,
  output_head_bytes: 2_048,
  output_tail_bytes: 2_048,
  run_detail_bytes: 2_097_152,
  history_card_bytes: 8_388_608,
});

/** Where a call is: asked and waiting, running, or finished (terminal snapshots only). */
export type CardPhase = "awaiting_approval" | "running" | "finished";

/** How a call ended, in a terminal snapshot. */
export type CardOutcome = "completed" | "failed" | "denied" | "cancelled" | "unknown";

/** What a finished call changed: nothing, the whole approved change, or something magi-code cannot know. */
export type CardEffect = "none" | "applied" | "unknown";

/** How a shell command ended. */
export type ShellEnding = "exit" | "signal" | "timeout" | "cancelled" | "abandoned" | "not_started";

/** A write or edit: what kind, and the sizes. */
export type CardWrite = {
  readonly mode: "create" | "overwrite" | "edit";
  readonly bytes_before: number;
  readonly bytes_after: number;
  readonly replacements: number | null;
};

/** A bounded unified diff. */
export type CardDiff = {
  readonly text: string;
  readonly truncated: boolean;
  readonly total_bytes: number;
};

/** What a finished read showed. */
export type CardRead = {
  readonly lines: number | null;
  readonly bytes: number | null;
  readonly truncated: boolean | null;
};

/** A command's output: head and tail kept, the middle counted. */
export type CardOutput = {
  readonly head: string;
  readonly tail: string;
  readonly total_bytes: number;
  readonly omitted_bytes: number;
};

/** A shell call. */
export type CardShell = {
  readonly command: string;
  readonly cwd: string;
  readonly timeout_s: number;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly ending: ShellEnding | null;
  readonly duration_ms: number | null;
  readonly output: CardOutput | null;
};

/** What an MCP tool call's result held: the kind of its content, or why none came back. */
export type McpResultKind = "text" | "structured" | "image" | "audio" | "resource" | "resource_link" | "mixed" | "empty" | "error" | "none";

/** An MCP tool call: where it went, a preview of its arguments, and what came back. */
export type CardMcp = {
  readonly server: string;
  readonly tool: string;
  readonly arguments: string;
  readonly arguments_truncated: boolean;
  readonly arguments_bytes: number;
  readonly result_kind: McpResultKind | null;
};

/**
 * One card of schema 1: every field always present, except `mcp`, which
 * this build adds to every card it builds and cards saved by an earlier
 * build lack (an optional field, as the schema allows).
 */
export type Card = {
  readonly tool: string;
  readonly kind: CardKind;
  readonly phase: CardPhase;
  readonly decision: ApprovalOutcome | null;
  readonly forced: boolean;
  readonly outcome: CardOutcome | null;
  readonly effect: CardEffect | null;
  readonly summary: string;
  readonly path: string | null;
  readonly write: CardWrite | null;
  readonly diff: CardDiff | null;
  readonly read: CardRead | null;
  readonly shell: CardShell | null;
  readonly mcp?: CardMcp | null;
  readonly detail_omitted: boolean;
};

/** The stage of one `tool.card` snapshot. */
export type CardStage = "initial" | "update" | "terminal";

/** The data of one `tool.card` event. */
export type ToolCardData = {
  readonly session_id: string;
  readonly run_id: string;
  readonly card_id: string;
  readonly activity_id: string;
  readonly stage: CardStage;
  readonly revision: number;
  readonly card: Card;
};

const NullableCount = v.nullable(CountSchema);

/** Validates a {@link CardWrite}. */
export const CardWriteSchema: v.GenericSchema<CardWrite> = v.object({
  mode: v.picklist(["create", "overwrite", "edit"]),
  bytes_before: CountSchema,
  bytes_after: CountSchema,
  replacements: NullableCount,
});

/** Validates a {@link CardDiff}. */
export const CardDiffSchema: v.GenericSchema<CardDiff> = v.object({ text: v.string(), truncated: v.boolean(), total_bytes: CountSchema });

/** Validates a {@link CardRead}. */
export const CardReadSchema: v.GenericSchema<CardRead> = v.object({ lines: NullableCount, bytes: NullableCount, truncated: v.nullable(v.boolean()) });

/** Validates a {@link CardOutput}. */
export const CardOutputSchema: v.GenericSchema<CardOutput> = v.object({ head: v.string(), tail: v.string(), total_bytes: CountSchema, omitted_bytes: CountSchema });

/** Validates a {@link CardShell}. */
export const CardShellSchema: v.GenericSchema<CardShell> = v.object({
  command: v.string(),
  cwd: v.string(),
  timeout_s: CountSchema,
  exit_code: v.nullable(v.pipe(v.number(), v.integer())),
  signal: v.nullable(v.string()),
  ending: v.nullable(v.picklist(["exit", "signal", "timeout", "cancelled", "abandoned", "not_started"])),
  duration_ms: NullableCount,
  output: v.nullable(CardOutputSchema),
});

/** Validates a {@link CardMcp}. */
export const CardMcpSchema: v.GenericSchema<CardMcp> = v.object({
  server: v.string(),
  tool: v.string(),
  arguments: v.string(),
  arguments_truncated: v.boolean(),
  arguments_bytes: CountSchema,
  result_kind: v.nullable(v.picklist(["text", "structured", "image", "audio", "resource", "resource_link", "mixed", "empty", "error", "none"])),
});

/** Validates a {@link Card}. */
export const CardSchema: v.GenericSchema<Card> = v.object({
  tool: v.string(),
  kind: v.picklist(CARD_KINDS),
  phase: v.picklist(["awaiting_approval", "running", "finished"]),
  decision: v.nullable(ApprovalOutcomeSchema),
  forced: v.boolean(),
  outcome: v.nullable(v.picklist(["completed", "failed", "denied", "cancelled", "unknown"])),
  effect: v.nullable(v.picklist(["none", "applied", "unknown"])),
  summary: v.string(),
  path: v.nullable(v.string()),
  write: v.nullable(CardWriteSchema),
  diff: v.nullable(CardDiffSchema),
  read: v.nullable(CardReadSchema),
  shell: v.nullable(CardShellSchema),
  mcp: v.exactOptional(v.nullable(CardMcpSchema)),
  detail_omitted: v.boolean(),
});

/** `tool.card` (negotiated): one snapshot of one tool call's card. */
export const ToolCardSchema: v.GenericSchema<ToolCardData> = v.object({
  session_id: SessionIdSchema,
  run_id: OpaqueIdSchema,
  card_id: OpaqueIdSchema,
  activity_id: v.string(),
  stage: v.picklist(["initial", "update", "terminal"]),
  revision: CountSchema,
  card: CardSchema,
});

/** The `tool.cards` descriptor `initialize` returns under `extensions`. */
export type ToolCardsDescriptor = {
  readonly schema_version: 1;
  readonly kinds: readonly CardKind[];
  readonly limits: typeof CARD_LIMITS;
};

/** Validates the descriptor's `limits`. */
export const CardLimitsSchema: v.GenericSchema<typeof CARD_LIMITS> = v.object({
  card_bytes: CountSchema,
  diff_bytes: CountSchema,
  output_head_bytes: CountSchema,
  output_tail_bytes: CountSchema,
  run_detail_bytes: CountSchema,
  history_card_bytes: CountSchema,
});

/** Validates a {@link ToolCardsDescriptor}. */
export const ToolCardsDescriptorSchema: v.GenericSchema<ToolCardsDescriptor> = v.object({
  schema_version: v.literal(CARD_SCHEMA_VERSION),
  kinds: v.pipe(v.array(v.picklist(CARD_KINDS)), v.readonly()),
  limits: CardLimitsSchema,
});

/** The descriptor this build returns to a client that negotiated `tool.cards`. */
export const TOOL_CARDS_DESCRIPTOR: ToolCardsDescriptor = Object.freeze({
  schema_version: CARD_SCHEMA_VERSION,
  kinds: CARD_KINDS,
  limits: CARD_LIMITS,
});
