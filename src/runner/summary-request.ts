/**
 * The one provider request a compaction makes: the selected model, no
 * tools, the summarisation prompt below as its system text, and the part
 * of the conversation being replaced rendered as one transcript, so no API
 * sees tool calls without the tools that define them. Its answer is the
 * summary, bounded to {@link SUMMARY_MAX_BYTES}.
 *
 * @module
 */

import { DiagnosticCode } from "../protocol/errors.ts";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import { accumulate } from "./providers/accumulate.ts";
import { openProviderStream } from "./providers/client.ts";
import type { ModelMessage } from "./providers/conversation.ts";
import type { ProviderEvent, Usage } from "./providers/events.ts";
import { buildRequest } from "./providers/request.ts";
import type { RunConfig } from "./run-config.ts";
import { isSummaryMessage } from "./replay.ts";
import { BYTES_PER_TOKEN, messageBytes } from "./context-meter.ts";

/** The most UTF-8 bytes of summary kept; a longer answer is cut there, with {@link SUMMARY_CUT_NOTE}. */
export const SUMMARY_MAX_BYTES = 32_768;
/** How a cut summary ends. */
export const SUMMARY_CUT_NOTE = "\n\n[Summary cut at 32,768 bytes.]";
/** The most tokens a summary may take: an eighth of the window, between these bounds (the most when the window is unknown). */
const SUMMARY_TOKENS = { min: 256, max: 8_192 } as const;
/** What a tool call's arguments and a tool's output keep in the transcript, in bytes. */
const CALL_BYTES = 1_024;
const OUTPUT_BYTES = 2_048;

/** The system text of the request. */
export const SUMMARY_PROMPT = `You are compacting the conversation between a user and magi-code, a coding agent, because it no longer fits the model's context. The conversation so far follows as a transcript. Write a summary that replaces it: the agent will continue the work from your summary alone, with the same tools and instructions.

Begin with one line "Title: " and a title of at most 50 characters that says what the user is working on. Then write plain text with these headings:
Goal: what the user asked for, in their own words where it matters, and any later changes of mind.
Decisions: what was decided or agreed, and why.
Files: every file read, created or changed, with what matters about each.
State: what was done, what was checked and how, errors met and whether they are solved.
Open work: what remains to do, the very next step first.
Skills: the skills that were loaded, by name, if any.

Keep names, paths, commands and numbers exact. Leave out pleasantries and anything the continuation does not need. Stay under the length you are given.`;

/** The summary's token budget for a window of `window` tokens (null: unknown). */
export function summaryTokens(window: number | null): number {
  if (window === null) return SUMMARY_TOKENS.max;
  return Math.min(SUMMARY_TOKENS.max, Math.max(SUMMARY_TOKENS.min, Math.floor(window / 8)));
}

/** One message as a transcript entry: who said it, tool calls and outputs cut to their bounds. */
function entry(message: ModelMessage): string {
  switch (message.role) {
    case "system":
      return "";
    case "user":
      return `User:\n${message.text}`;
    case "tool":
      return `[Result of ${message.name}${message.isError ? " (failed)" : ""}: ${clampUtf8(message.output, OUTPUT_BYTES, " …[cut]")}]`;
    case "assistant": {
      const calls = message.toolCalls.map((call) => `[Called ${call.name} with ${clampUtf8(call.argumentsJson, CALL_BYTES, " …[cut]")}]`);
      return ["Assistant:", ...(message.text === "" ? [] : [message.text]), ...calls].join("\n");
    }
  }
}

/**
 * The transcript of `messages` for a request that must fit `window` tokens
 * (null: unknown, no bound) beside the prompt and a summary of
 * `summaryBudget` tokens. When it would not, the oldest entries go, and a
 * line says how many; a leading earlier summary always stays.
 */
export function transcript(messages: readonly ModelMessage[], window: number | null, summaryBudget: number): string {
  const entries = messages.map(entry).filter((text) => text !== "");
  if (window === null) return entries.join("\n\n");
  let room = (window - summaryBudget) * BYTES_PER_TOKEN - utf8ByteCount(SUMMARY_PROMPT) - 256;
  const head = isSummaryMessage(messages[0]) ? entries.slice(0, 1) : [];
  room -= head.reduce((bytes, text) => bytes + utf8ByteCount(text) + 2, 0);
  const tail: string[] = [];
  for (let index = entries.length - 1; index >= head.length; index--) {
    const bytes = utf8ByteCount(entries[index]!) + 2;
    if (bytes > room) break;
    room -= bytes;
    tail.unshift(entries[index]!);
  }
  const omitted = entries.length - head.length - tail.length;
  return [...head, ...(omitted > 0 ? [`[${omitted} earlier messages left out: they did not fit the model's context.]`] : []), ...tail].join("\n\n");
}

/** A title line as the prompt asks for it, tolerating Markdown emphasis: `Title: …`, `**Title:** …`. */
const TITLE_LINE = /^[\s*_#]*title[*_]*\s*:[*_]*\s*(.*)$/iu;

/** `text` without the title line it begins with, and that title (null when it begins with none). */
export function splitTitle(text: string): { readonly title: string | null; readonly summary: string } {
  const lines = text.trimStart().split("\n");
  const match = TITLE_LINE.exec(lines[0]!);
  if (match === null) return { title: null, summary: text };
  return { title: match[1]!.trim(), summary: lines.slice(1).join("\n").trim() };
}

/** What the request came to; `title` is the title line's text, unjudged (null: none). */
export type SummaryOutcome =
  | { readonly ok: true; readonly summary: string; readonly title: string | null; readonly cut: boolean }
  | { readonly ok: false; readonly reason: "cancelled" | "failed" | "empty" | "too_long"; readonly code: DiagnosticCode | null };

/**
 * Asks the selected model to summarise `messages` and reads its answer,
 * keeping at most {@link SUMMARY_MAX_BYTES} of it (the stream stops there).
 * `usage` receives what the provider reported (null: nothing) once the
 * provider answered the request with any status, so a turn whose only
 * request was this one still reached a provider (`run.usage`). Never throws.
 */
export async function requestSummary(
  config: RunConfig,
  messages: readonly ModelMessage[],
  signal: AbortSignal,
  usage: (usage: Usage | null) => void,
): Promise<SummaryOutcome> {
  const budget = summaryTokens(config.contextWindow);
  const bytes = messages.reduce((total, message) => total + messageBytes(message), 0);
  const request = buildRequest(config.endpoint, {
    model: config.model,
    // No reasoning settings: the summary needs none, and Anthropic's thinking budget must stay under max_tokens.
    effort: "default",
    messages: [
      { role: "system", text: SUMMARY_PROMPT },
      { role: "user", text: `Summarise this conversation (${bytes} bytes) in at most about ${budget} tokens.\n\n${transcript(messages, config.contextWindow, budget)}` },
    ],
    tools: [],
    apiKey: config.apiKey,
    maxOutputTokens: budget,
  });
  const stream = new AbortController();
  const stop = () => stream.abort();
  signal.addEventListener("abort", stop, { once: true });
  const kept: ProviderEvent[] = [];
  let text = "";
  let textBytes = 0;
  let cut = false;
  let failure: DiagnosticCode | null = null;
  let overflow = false;
  let answered = false;
  try {
    const opened = await openProviderStream(config.runtime.fetch, config.endpoint, config.model, request, stream.signal);
    answered = opened.ok || opened.status !== null;
    if (!opened.ok) [failure, overflow] = [opened.code, opened.overflow];
    else {
      for await (const event of opened.events) {
        if (event.type === "text") {
          text += event.delta;
          textBytes += utf8ByteCount(event.delta);
          // One delta past the bound is enough to know it was cut; the rest is never held.
          if (textBytes > SUMMARY_MAX_BYTES) {
            cut = true;
            stream.abort();
            break;
          }
        } else if (event.type === "usage" || event.type === "finish") kept.push(event);
        else if (event.type === "error") failure = DiagnosticCode.providerStreamError;
      }
    }
  } catch {
    failure = DiagnosticCode.providerConnectionLost;
  } finally {
    signal.removeEventListener("abort", stop);
  }
  const folded = accumulate(kept);
  if (answered) usage(folded.usage);
  if (signal.aborted) return { ok: false, reason: "cancelled", code: null };
  if (overflow) return { ok: false, reason: "too_long", code: failure };
  if (failure !== null && !cut) return { ok: false, reason: "failed", code: failure };
  const { title, summary } = splitTitle(cut ? clampUtf8(text, SUMMARY_MAX_BYTES, SUMMARY_CUT_NOTE) : text.trim());
  if (summary.trim() === "") return { ok: false, reason: "empty", code: null };
  return { ok: true, summary, title, cut };
}
