/**
 * What the model and the client learn from one MCP tool call. The model
 * gets the text content, at most 64 KiB of it (the built-in tools' output
 * bound), each image, audio clip or resource as one line naming its type
 * and size (never its bytes), and `structuredContent` as compact JSON up to
 * {@link MAX_STRUCTURED_BYTES} when the result carries no text; an `isError`
 * result reaches it as a failure. The activity summary says how the call
 * ended and how much came back, never what. Everything is redacted and
 * bounded by `finishResult`, like a built-in tool's result.
 *
 * @module
 */

import { finishResult, formatBytes, count } from "../runner/tools/tool-text.ts";
import { MAX_OUTPUT_BYTES, type ToolResult } from "../runner/tools/tool.ts";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import type { CallOutcome } from "./connection.ts";
import { MAX_MESSAGE_BYTES, MAX_STRUCTURED_BYTES } from "./limits.ts";
import type { CallToolResult } from "./sdk.ts";
import type { McpResultKind } from "../protocol/tool-cards.ts";

/** Where a call went, for its texts. */
export interface CallLabel {
  /** The server's settings name. */
  readonly server: string;
  /** The tool, as shown (`showExactly`). */
  readonly tool: string;
  /** The server's tool timeout. */
  readonly timeoutMs: number;
}

/** Longest server error message passed to the model, in bytes. */
const MAX_ERROR_MESSAGE_BYTES = 1024;

type Block = CallToolResult["content"][number];

/** The bytes a base64 payload decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

/** One non-text block as the line that stands for it. */
function blockLine(block: Exclude<Block, { type: "text" }>): string {
  switch (block.type) {
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${formatBytes(decodedBytes(block.data))}, not shown]`;
    case "resource": {
      const resource = block.resource;
      const size = "text" in resource ? formatBytes(utf8ByteCount(resource.text)) + " of text" : formatBytes(decodedBytes(resource.blob));
      return `[embedded resource: ${resource.mimeType ?? "no type"}, ${size}, not shown]`;
    }
    case "resource_link":
      return `[resource link: ${JSON.stringify(clampUtf8(block.name, 200))}, ${JSON.stringify(clampUtf8(block.uri, 300))}]`;
  }
}

/** The text the model gets, pre-cut near the output bound so redaction never runs over megabytes. */
function resultText(result: CallToolResult): { text: string; textBytes: number; others: number } {
  const parts: string[] = [];
  let kept = 0;
  let textBytes = 0;
  let others = 0;
  for (const block of result.content) {
    const line = block.type === "text" ? block.text : blockLine(block);
    if (block.type === "text") textBytes += utf8ByteCount(block.text);
    else others++;
    if (kept > MAX_OUTPUT_BYTES) continue;
    const cut = clampUtf8(line, MAX_OUTPUT_BYTES - kept + 1, "");
    parts.push(cut);
    kept += utf8ByteCount(cut) + 1;
  }
  const textual = result.content.some((block) => block.type === "text");
  if (!textual && result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    const bytes = utf8ByteCount(json);
    parts.push(bytes <= MAX_STRUCTURED_BYTES ? json : `${clampUtf8(json, MAX_STRUCTURED_BYTES, "")}\n[structured content cut: ${formatBytes(bytes)} in all]`);
  }
  let text = parts.join("\n");
  if (kept > MAX_OUTPUT_BYTES) text = `${clampUtf8(text, MAX_OUTPUT_BYTES - 100, "")}\n[output cut at 64 KiB of ${formatBytes(textBytes)} of text]`;
  return { text: text === "" ? "(no content)" : text, textBytes, others };
}

/** What a call's result held, for its card: the one kind of all its content, `mixed`, `empty`, `error`, or `none` without a result. */
export function resultKind(outcome: CallOutcome): McpResultKind {
  if (outcome.kind !== "result") return "none";
  const result = outcome.result;
  if (result.isError === true) return "error";
  const kinds = new Set(result.content.map((block) => block.type));
  if (kinds.size === 0) return result.structuredContent === undefined ? "empty" : "structured";
  return kinds.size === 1 ? [...kinds][0]! : "mixed";
}

/** The bounded, redacted result of a call to `label`'s tool. */
export function callResult(outcome: CallOutcome, label: CallLabel, secrets: readonly string[]): ToolResult {
  const name = `${label.server} ${label.tool}`;
  switch (outcome.kind) {
    case "result": {
      const { text, textBytes, others } = resultText(outcome.result);
      const amount = `${formatBytes(textBytes)} of text${others === 0 ? "" : `, ${count(others, "other block")}`}`;
      if (outcome.result.isError === true) {
        return finishResult(false, `The tool reported an error:\n${text}`, `${name}: failed (the tool reported an error; ${amount})`, secrets);
      }
      return finishResult(true, text, `${name}: completed (${amount})`, secrets);
    }
    case "cancelled":
      return finishResult(false, "The call was cancelled.", `${name}: cancelled`, secrets);
    case "timeout":
      return finishResult(
        false,
        `The tool did not answer within ${label.timeoutMs} ms (the server's tool_timeout_ms), so the call was cancelled.`,
        `${name}: timed out after ${label.timeoutMs} ms`,
        secrets,
      );
    case "stopped":
      return finishResult(
        false,
        `The MCP server ${JSON.stringify(label.server)} has stopped, so none of its tools can be called until magi-code is restarted. Do not retry.`,
        `${name}: failed (the server has stopped)`,
        secrets,
      );
    case "oversized":
      return finishResult(
        false,
        `The server sent a message larger than ${formatBytes(MAX_MESSAGE_BYTES)}, so the call's result was discarded. Ask for less.`,
        `${name}: failed (answer over ${formatBytes(MAX_MESSAGE_BYTES)})`,
        secrets,
      );
    case "invalid":
      return finishResult(false, "The server's answer was not a valid tool result.", `${name}: failed (invalid answer)`, secrets);
    case "unreachable":
      return finishResult(false, "The server could not be reached.", `${name}: failed (server unreachable)`, secrets);
    case "error":
      return finishResult(
        false,
        `The server refused the call (error ${outcome.code}): ${clampUtf8(outcome.message, MAX_ERROR_MESSAGE_BYTES)}`,
        `${name}: failed (server error ${outcome.code})`,
        secrets,
      );
  }
}
