/**
 * Whether a refused request means "the conversation does not fit the
 * model's context window", each API's own way of saying it (the reactive
 * path of compaction, docs/features/runner.md "Compaction"):
 *
 * - OpenAI Chat Completions and Responses: HTTP 400 with `error.code`
 *   `context_length_exceeded`, or the same code on a Responses stream's
 *   `error` event;
 * - Anthropic Messages: HTTP 400 `invalid_request_error` whose message says
 *   `prompt is too long` or that input and `max_tokens` `exceed context
 *   limit` (Anthropic sends no code for it);
 * - OpenAI-compatible servers: OpenRouter and vLLM say `maximum context
 *   length` in a 400's message, llama.cpp's server sends `error.type`
 *   `exceed_context_size_error`;
 * - any API: HTTP 413, a request too large to be taken at all.
 *
 * Only this yes-or-no leaves: the body is read (at most
 * {@link OVERFLOW_BODY_BYTES}) to decide it and then dropped, since providers
 * echo keys and prompts in their error messages.
 *
 * @module
 */

import { safeProviderCode } from "./events.ts";

/** The most bytes of an error body read to classify it; a longer body is not an overflow answer. */
export const OVERFLOW_BODY_BYTES = 65_536;

/** The stream error code that means the request was too long (OpenAI Responses, and Chat servers that copy it). */
const OVERFLOW_CODE = "context_length_exceeded";

/** Messages that say the prompt is over the window, as Anthropic, OpenRouter and vLLM word them. */
const OVERFLOW_MESSAGE = /prompt is too long|exceed context limit|maximum context length|exceeds the context window/i;

/** Whether a provider error code carried by a stream's `error` event means the request was too long. */
export function isOverflowCode(code: string | null): boolean {
  return code === OVERFLOW_CODE;
}

/** Whether a failed response's `status` and `body` (null when unread or over the bound) say the request was too long. */
export function isOverflowAnswer(status: number, body: Uint8Array | null): boolean {
  if (status === 413) return true;
  if (status !== 400 || body === null) return false;
  let error: unknown;
  try {
    error = (JSON.parse(new TextDecoder().decode(body)) as { error?: unknown } | null)?.error;
  } catch {
    return false;
  }
  if (typeof error !== "object" || error === null) return false;
  const { code, type, message } = error as { code?: unknown; type?: unknown; message?: unknown };
  return isOverflowCode(safeProviderCode(code)) || type === "exceed_context_size_error" ||
    (typeof message === "string" && OVERFLOW_MESSAGE.test(message));
}
