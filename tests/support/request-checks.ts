/**
 * Structural checks on built provider request bodies, shared by the request
 * builder tests: which strings a body may contain, and that tool calls pair
 * with their results in each API's shape.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ModelMessage } from "../../src/runner/providers/conversation.ts";
import type { ProviderApi } from "../../src/config/settings.ts";
import { EFFORTS } from "../../src/policy/efforts.ts";

const VOCABULARY = [
  "user", "assistant", "system", "tool", "text", "input_text", "output_text", "function", "function_call",
  "function_call_output", "reasoning", "thinking", "redacted_thinking", "tool_use", "tool_result", "enabled", "auto",
  "reasoning.encrypted_content", ...EFFORTS,
];

/** Every string value (not key) in a JSON value, depth first. */
export function leaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) leaves(item, out);
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) leaves(item, out);
  return out;
}

/**
 * Every string a built body may contain for `messages`: what the messages
 * carry (parsed tool arguments included), the joined system text, the APIs'
 * fixed vocabulary and `extra` (model, tool specs).
 */
export function given(messages: readonly ModelMessage[], extra: readonly string[]): Set<string> {
  const allowed = new Set<string>([...VOCABULARY, ...extra, messages.filter((m) => m.role === "system").map((m) => m.text).join("\n\n")]);
  for (const m of messages) {
    for (const value of leaves(m)) allowed.add(value);
    if (m.role !== "assistant") continue;
    for (const call of m.toolCalls) {
      try {
        for (const value of leaves(JSON.parse(call.argumentsJson))) allowed.add(value);
      } catch { /* not JSON: sent as given, or as {} */ }
    }
  }
  return allowed;
}

/** Asserts every call is paired with exactly one result, the result after the call, ids unique. */
export function assertPaired(api: ProviderApi, sent: Record<string, unknown>): void {
  const pending = new Set<string>();
  const calls: string[] = [];
  const results: string[] = [];
  const items = (api === "openai-responses" ? sent.input : sent.messages) as Record<string, unknown>[];
  for (const item of items) {
    const blocks = api === "anthropic-messages" ? item.content as Record<string, unknown>[] : [item];
    // Chat and Anthropic need the results right after the calling turn.
    if (api !== "openai-responses" && item.role === "assistant") assert.equal(pending.size, 0);
    for (const block of blocks) {
      const call = block.type === "tool_use" ? block.id : block.type === "function_call" ? block.call_id : undefined;
      const calledIds = api === "openai-chat" ? ((block.tool_calls ?? []) as { id: string }[]).map((c) => c.id) : call === undefined ? [] : [call as string];
      for (const id of calledIds) (calls.push(id), pending.add(id));
      const result = block.type === "tool_result" ? block.tool_use_id : block.type === "function_call_output" ? block.call_id : block.role === "tool" ? block.tool_call_id : undefined;
      if (result === undefined) continue;
      assert.ok(pending.delete(result as string), "a result without a preceding call");
      results.push(result as string);
    }
  }
  assert.equal(pending.size, 0, "a call without a result");
  assert.equal(new Set(calls).size, calls.length);
  assert.deepEqual([...results].sort(), [...calls].sort());
}
