/**
 * Descriptions of the `tool.cards` extension's schemas (the `tool.card`
 * event, the card and its parts, the descriptor), from
 * `docs/features/local-agent-tool-cards.md`. See `describe.ts` for why they
 * are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import {
  CardDiffSchema,
  CardLimitsSchema,
  CardMcpSchema,
  CardOutputSchema,
  CardReadSchema,
  CardSchema,
  CardShellSchema,
  CardWriteSchema,
  ToolCardSchema,
  ToolCardsDescriptorSchema,
} from "./tool-cards.ts";
import { ExtensionsSchema } from "./results.ts";

const ESCAPED = "escaped (its JSON form, quotes excluded)";

/** Every `tool.cards` object schema's descriptions. */
export const CARD_DESCRIPTIONS: Descriptions = new Map([
  describe(ExtensionsSchema, "`initialize`'s `extensions`: the descriptor of each negotiated extension that has one, by capability name.", {
    "tool.cards": "The `tool.cards` descriptor, when `initialize` required `tool.cards`.",
    "client.tools": "The registered client tools, when `initialize` required `client.tools` (docs/features/local-agent-client-tools.md).",
  }),
  describe(ToolCardsDescriptorSchema, "The `tool.cards` descriptor: the card schema, kinds and bounds this child uses.", {
    schema_version: "The card schema version: 1.",
    kinds: "The card kinds this child produces; fail closed on any other.",
    limits: "The card bounds, in UTF-8 bytes.",
  }),
  describe(CardLimitsSchema, "The card bounds, in UTF-8 bytes.", {
    card_bytes: "The most one card takes serialized.",
    diff_bytes: `The most a card's \`diff.text\` takes, ${ESCAPED}.`,
    output_head_bytes: `The most a shell card's \`output.head\` takes, ${ESCAPED}.`,
    output_tail_bytes: `The most a shell card's \`output.tail\` takes, ${ESCAPED}.`,
    run_detail_bytes: "The diff and output bytes (escaped) one run attaches to its cards; later cards go without them (`detail_omitted`).",
    history_card_bytes: "The saved cards (serialized) one history snapshot attaches to its activity entries, earliest first; later entries page with `card: null`.",
  }),
  describe(ToolCardSchema, "`tool.card` (negotiated: only for a client that required `tool.cards`): one snapshot of one tool call's card; critical, never dropped.", {
    session_id: "The run's session.",
    run_id: "The run this event belongs to.",
    card_id: "The card's run-scoped opaque id; the call's first `activity` event carries it too.",
    activity_id: "The call's activity id.",
    stage: "`initial` (the call is prepared, before any approval request), `update`, or `terminal` (once, last).",
    revision: "0 for the card's first snapshot, higher for each later one (gaps allowed); keep the highest.",
    card: "The whole card as of this snapshot.",
  }),
  describe(CardSchema, "One tool call's card, schema 1: selected, bounded facts, never raw input or output.", {
    tool: "The tool's name as its activity names it.",
    kind: "Which parts below are set.",
    phase: "`awaiting_approval`, `running`, or `finished` (terminal snapshots).",
    decision: "The public approval decision; null while asked and unanswered, or when the call never reached the approval step.",
    forced: "Whether the call was asked although its policy allows it.",
    outcome: "Null before the terminal snapshot; then how the call ended (`unknown`: it started and how it ended cannot be established).",
    effect: "Null before the terminal snapshot; then `none`, `applied` (the whole write) or `unknown`.",
    summary: "The call's latest activity summary, redacted, at most 1,024 bytes.",
    path: "Read, write and edit cards: the canonical workspace-relative path; else null.",
    write: "Write and edit cards: the write's mode and sizes; else null.",
    diff: "Write and edit cards: the unified diff the call makes; null without a text diff.",
    read: "Read cards once finished: what the read showed; else null.",
    shell: "Shell cards: the command and how it ended; else null.",
    mcp: "MCP tool calls (kind `other`): server, tool, argument preview and result kind; else null (absent on cards saved by an earlier build).",
    detail_omitted: "Whether the run's detail budget was spent before this card's diff or output could be attached.",
  }),
  describe(CardWriteSchema, "What a write or edit does to its file.", {
    mode: "`create`, `overwrite` (write_file over an existing file) or `edit`.",
    bytes_before: "The file's size before (0 when created).",
    bytes_after: "The size the call writes.",
    replacements: "Occurrences an edit replaces; null for write_file.",
  }),
  describe(CardDiffSchema, "A unified diff (diff -u), redacted and escaped for display.", {
    text: "The diff, or its head and a truncation marker line when longer than `diff_bytes`.",
    truncated: "Whether `text` was cut.",
    total_bytes: "The whole diff's UTF-8 size.",
  }),
  describe(CardReadSchema, "What a finished read showed the model.", {
    lines: "Lines shown; null when the read did not complete.",
    bytes: "Bytes shown; null when the read did not complete.",
    truncated: "Whether an output or scan limit cut the read; null when it did not complete.",
  }),
  describe(CardShellSchema, "A shell call: the command and, once finished, how it ended.", {
    command: "The exact command, redacted and escaped as the approval prompt shows it.",
    cwd: "Where it runs, relative to the workspace: `.`.",
    timeout_s: "Its timeout in seconds.",
    exit_code: "Its exit status; null before the end or when a signal ended it.",
    signal: "The signal that ended it; else null.",
    ending: "Null before the end; then `exit`, `signal`, `timeout`, `cancelled`, `abandoned` (the wait for its output was given up) or `not_started`.",
    duration_ms: "From spawn to the end of the wait; null before the end or when it never started.",
    output: "Its combined output once finished; null before, or when it never started or the detail budget was spent.",
  }),
  describe(CardMcpSchema, "An MCP tool call: where it went, its arguments' preview and what came back.", {
    server: "The server's settings name, redacted and escaped.",
    tool: "The server's own name of the tool, redacted and escaped.",
    arguments: "The arguments as compact JSON, redacted and escaped, cut to 1,024 bytes escaped ending in `…`.",
    arguments_truncated: "Whether `arguments` was cut.",
    arguments_bytes: "The UTF-8 size of the whole compact JSON of the arguments.",
    result_kind: "Null before the terminal snapshot; then `text`, `structured`, `image`, `audio`, `resource`, `resource_link` (all its content of that kind), `mixed`, `empty`, `error` (the tool reported an error) or `none` (no result came back).",
  }),
  describe(CardOutputSchema, "A command's combined stdout and stderr: head and tail kept, the middle counted.", {
    head: `The first bytes, redacted, at most \`output_head_bytes\` ${ESCAPED}.`,
    tail: `The last bytes when there were more, at most \`output_tail_bytes\`; else "".`,
    total_bytes: "Every byte the command wrote.",
    omitted_bytes: "Bytes in neither head nor tail.",
  }),
]);
