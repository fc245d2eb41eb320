/**
 * Anthropic Messages request builder: the neutral conversation as a streaming
 * `POST /messages` body.
 *
 * History: thinking blocks (with their signatures) are replayed before the
 * assistant's text and `tool_use` blocks, because Anthropic requires the
 * signed thinking that preceded a tool call when its result is sent back;
 * tool results travel as `tool_result` blocks in the following user turn.
 *
 * Effort: Claude 4.6 and later take adaptive thinking (`thinking.type:
 * "adaptive"` plus `output_config.effort`) and Opus 4.7 and later reject the
 * older fixed budget, so the model id decides the shape; every other model,
 * an unrecognised id included, keeps `thinking.type: "enabled"` with a
 * budget. The rules and their sources are in
 * docs/decisions/provider-library.md.
 *
 * @module
 */

import type { Endpoint } from "../../config/providers.ts";
import {
  type AssistantMessage,
  baseHeaders,
  type BuiltRequest,
  joinUrl,
  normalizeHistory,
  type RequestParams,
} from "./conversation.ts";
import type { Effort } from "../../policy/efforts.ts";
import { type ClaudeModel, parseClaudeModel } from "../../policy/claude-model.ts";

// Existing callers and tests import the parser from here; it lives in policy/ so the effort table can read ids too.
export { type ClaudeModel, parseClaudeModel };

/** The API version header value this builder's body shape follows. */
export const ANTHROPIC_VERSION = "2023-06-01";

// Thinking room per effort: the fixed budget on older models, and on adaptive
// models the same room added to `max_tokens`, where thinking also counts.
const THINKING_BUDGET: Readonly<Record<Exclude<Effort, "default">, number>> = {
  low: 2_048,
  medium: 8_192,
  high: 16_384,
  xhigh: 32_000,
  max: 48_000,
};

function atLeast(model: ClaudeModel, major: number, minor: number): boolean {
  return model.major > major || (model.major === major && model.minor >= minor);
}

// Opus/Sonnet 4.6 know low..high and max but not xhigh (added with Opus 4.7);
// like Anthropic's own client we run it at the highest level below, `high`,
// rather than jump to the unbounded `max`.
function adaptiveEffort(effort: Exclude<Effort, "default">, model: ClaudeModel): string {
  return effort === "xhigh" && !atLeast(model, 4, 7) ? "high" : effort;
}

type Block = Record<string, unknown>;
type Turn = { role: "user" | "assistant"; content: Block[] };

function parseInput(argumentsJson: string): Record<string, unknown> {
  // `input` must be an object; "" (no arguments) and broken JSON both become {}.
  try {
    const value: unknown = JSON.parse(argumentsJson);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function assistantBlocks(message: AssistantMessage): Block[] {
  const blocks: Block[] = [];
  for (const item of message.replay) {
    if (item.kind === "anthropic.thinking") blocks.push({ type: "thinking", thinking: item.thinking, signature: item.signature });
    if (item.kind === "anthropic.redacted_thinking") blocks.push({ type: "redacted_thinking", data: item.data });
  }
  if (message.text !== "") blocks.push({ type: "text", text: message.text });
  for (const call of message.toolCalls) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: parseInput(call.argumentsJson) });
  return blocks;
}

function toTurns(params: RequestParams): { system: string | null; turns: Turn[] } {
  const { system, messages } = normalizeHistory(params.messages);
  const turns: Turn[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    let blocks: Block[];
    if (message.role === "assistant") blocks = assistantBlocks(message);
    else if (message.role === "tool") {
      blocks = [{ type: "tool_result", tool_use_id: message.callId, content: message.output, ...(message.isError ? { is_error: true } : {}) }];
    } else blocks = message.text === "" ? [] : [{ type: "text", text: message.text }]; // empty text blocks are rejected
    if (blocks.length === 0) continue;
    // Roles must alternate: tool results and a following user text share one user turn.
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return { system, turns };
}

/**
 * Builds the streaming Messages request. `default` effort sends no thinking
 * settings. Otherwise Claude 4.6+ gets adaptive thinking with
 * `output_config.effort` (`xhigh` runs as `high` on 4.6) and summarized
 * thinking text, which Opus 4.7+ would otherwise omit; other models get
 * extended thinking with a fixed budget. Either way `max_tokens` is
 * `maxOutputTokens` plus the effort's thinking room, because thinking counts
 * toward it and would otherwise cut the answer short. No sampling parameters
 * are sent: thinking rejects a non-default temperature.
 */
export function buildAnthropicRequest(endpoint: Endpoint, params: RequestParams): BuiltRequest {
  const headers = baseHeaders();
  if (params.apiKey !== null) headers["x-api-key"] = params.apiKey;
  headers["anthropic-version"] = ANTHROPIC_VERSION;
  const { system, turns } = toTurns(params);
  const effort = params.effort === "default" ? null : params.effort;
  const budget = effort === null ? 0 : THINKING_BUDGET[effort];
  const body: Record<string, unknown> = {
    model: params.model,
    stream: true,
    max_tokens: params.maxOutputTokens + budget,
  };
  if (system !== null) body.system = system;
  body.messages = turns;
  if (params.tools.length > 0) {
    body.tools = params.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  }
  if (effort !== null) {
    const claude = parseClaudeModel(params.model);
    if (claude !== null && atLeast(claude, 4, 6)) {
      body.thinking = { type: "adaptive", display: "summarized" };
      body.output_config = { effort: adaptiveEffort(effort, claude) };
    } else body.thinking = { type: "enabled", budget_tokens: budget };
  }
  return { url: joinUrl(endpoint, "messages"), headers, body: JSON.stringify(body) };
}
