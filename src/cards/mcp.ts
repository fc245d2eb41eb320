/**
 * The `mcp` part of an MCP tool call's card
 * (`docs/features/local-agent-tool-cards.md`): the server and tool, a
 * bounded preview of the arguments as sent, and once finished the kind of
 * result that came back (never the result itself).
 *
 * @module
 */

import type { CardMcp, McpResultKind } from "../protocol/tool-cards.ts";
import { cutWithMarker, displayText } from "./bounds.ts";
import type { CallFacts } from "./facts.ts";
import { utf8ByteCount } from "../util/utf8.ts";

/** The most the argument preview takes, escaped. */
export const MCP_ARGUMENTS_BYTES = 1_024;

/** The `mcp` part of a prepared MCP call: redacted and escaped like every card text, the arguments cut with `…`. */
export function preparedMcp(facts: Extract<CallFacts, { kind: "mcp" }>, secrets: readonly string[]): CardMcp {
  const json = displayText(JSON.stringify(facts.arguments), secrets);
  const { text, cut } = cutWithMarker(json, MCP_ARGUMENTS_BYTES, () => "…");
  return {
    server: displayText(facts.server, secrets),
    tool: displayText(facts.tool, secrets),
    arguments: text,
    arguments_truncated: cut,
    arguments_bytes: utf8ByteCount(json),
    result_kind: null,
  };
}

/** `mcp` with the kind of result its call got. */
export function finishedMcp(mcp: CardMcp, result: McpResultKind): CardMcp {
  return { ...mcp, result_kind: result };
}
