/**
 * The auxiliary titling request: after a session's first completed turn,
 * one provider request to the selected model, without tools, asks for a
 * short title of what the user works on. It is bounded three ways: what it
 * sends (an excerpt of the turn), how long it may take, and how much of the
 * reply is read. It reports nothing and stores nothing itself: the caller
 * judges the text (`store/discovery/title.ts`) and appends the record.
 *
 * @module
 */

import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import { openProviderStream } from "./providers/client.ts";
import { buildRequest } from "./providers/request.ts";
import type { ModelMessage } from "./providers/conversation.ts";
import { estimateTokens, outputRoom } from "./context-meter.ts";
import type { RunConfig } from "./run-config.ts";

/** What the model is told; the reply is cut and sanitized whatever it holds. */
export const TITLE_INSTRUCTIONS =
  "You write titles for conversations between a user and a coding assistant. Reply with one title of at most 50 characters that says what the user is working on. Reply with the title alone: no quotes, no trailing period, no explanation.";

/** Bytes of the user's prompt and of the assistant's answer sent, each. */
export const TITLE_EXCERPT_BYTES = 4_096;

/** Longest the request may take, headers and reply included. */
export const TITLE_DEADLINE_MS = 30_000;

/** Output room: a title needs few tokens, a model that reasons first needs more. */
const TITLE_OUTPUT_TOKENS = 2_048;

/** Reply text read at most; a title is its first line, so nothing past this is needed. */
const TITLE_REPLY_BYTES = 1_024;

/** The turn a title is asked for. */
export interface TitleExcerpt {
  /** The user's prompt. */
  readonly prompt: string;
  /** The assistant's (stored, redacted) answer. */
  readonly answer: string;
}

/**
 * Sends the titling request and returns the reply's text (at most
 * {@link TITLE_REPLY_BYTES} bytes of it), or null when it failed: no
 * answer, an error status, a broken stream, the deadline, or `signal`.
 */
export async function requestTitle(config: RunConfig, excerpt: TitleExcerpt, signal: AbortSignal): Promise<string | null> {
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal.addEventListener("abort", abort, { once: true });
  const deadline = config.runtime.setTimer(TITLE_DEADLINE_MS, abort);
  try {
    if (signal.aborted) return null;
    const messages: ModelMessage[] = [
      { role: "system", text: TITLE_INSTRUCTIONS },
      { role: "user", text: conversationText(excerpt) },
    ];
    const request = buildRequest(config.endpoint, {
      model: config.model,
      effort: "default",
      messages,
      tools: [],
      apiKey: config.apiKey,
      // A small window would otherwise refuse the request outright (context-meter.ts, outputRoom).
      maxOutputTokens: outputRoom(config.contextWindow, estimateTokens(messages), estimateTokens(messages), TITLE_OUTPUT_TOKENS),
    });
    const opened = await openProviderStream(config.runtime.fetch, config.endpoint, config.model, request, stop.signal);
    if (!opened.ok) return null;
    let text = "";
    let finished = false;
    for await (const event of opened.events) {
      if (event.type === "text") text += event.delta;
      if (event.type === "error") return null;
      if (event.type === "finish") finished = true;
      if (utf8ByteCount(text) > TITLE_REPLY_BYTES) {
        stop.abort();
        return text;
      }
    }
    return finished && !stop.signal.aborted ? text : null;
  } catch {
    return null;
  } finally {
    deadline.dispose();
    signal.removeEventListener("abort", abort);
  }
}

function conversationText(excerpt: TitleExcerpt): string {
  return `Write the title of this conversation.\n\n<user>\n${clampUtf8(excerpt.prompt, TITLE_EXCERPT_BYTES)}\n</user>\n\n<assistant>\n${
    clampUtf8(excerpt.answer, TITLE_EXCERPT_BYTES)
  }\n</assistant>`;
}
