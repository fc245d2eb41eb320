/**
 * How many tokens a model's context holds, which proactive compaction
 * measures against (docs/features/runner.md, "Compaction"). A window comes
 * from, in order: the provider's own model list as the catalog cache keeps
 * it (Anthropic's `max_input_tokens`, OpenRouter's `context_length`), the
 * endpoint's `context_window` setting, a small built-in table for the
 * built-in providers' default models, else it is unknown, and only the
 * reactive path (a provider's "context too long" answer) compacts.
 *
 * The provider's list wins because it is per model and says what the
 * provider enforces; a setting covers a whole endpoint (a local server's
 * configured context, say), and beats the table, which is our guess for a
 * default model.
 *
 * @module
 */

import * as v from "valibot";

/** The smallest window a setting may state, in tokens: below it no system prompt and reply fit. */
export const MIN_CONTEXT_WINDOW = 1_024;
/** The largest window a setting or a provider list may state, in tokens. */
export const MAX_CONTEXT_WINDOW = 100_000_000;

/** The `context_window` of a `providers.endpoints` entry. */
export const ContextWindowSchema = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(MIN_CONTEXT_WINDOW),
  v.maxValue(MAX_CONTEXT_WINDOW),
  v.description(
    `Tokens the endpoint's models hold in their context, ${MIN_CONTEXT_WINDOW}-${MAX_CONTEXT_WINDOW}; used when the provider's model list does not say.`,
  ),
);

/**
 * The built-in providers' default models and their windows (input and
 * output together), from each vendor's model page: OpenAI's gpt-5-mini
 * holds 400,000 tokens; Anthropic's claude-sonnet-4-5 200,000 (1,000,000
 * only with a beta header magi-code does not send); qwen2.5-coder:7b was
 * trained for 32,768, which `ollama show` reports, though an Ollama server
 * may serve less (its `OLLAMA_CONTEXT_LENGTH`): set `context_window` then.
 */
const BUILT_IN_WINDOWS: ReadonlyMap<string, number> = new Map([
  ["openai/gpt-5-mini", 400_000],
  ["anthropic/claude-sonnet-4-5", 200_000],
  ["ollama/qwen2.5-coder:7b", 32_768],
]);

/** Whether `value` is a window a provider's list may report. */
export function isContextWindow(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_CONTEXT_WINDOW;
}

/** What a window is resolved from. */
export interface WindowSources {
  readonly provider: string;
  readonly model: string;
  /** What the provider's cached model list says, or null. */
  readonly cached: number | null;
  /** The endpoint's `context_window` setting, or null. */
  readonly configured: number | null;
}

/** The model's context window in tokens, or null when unknown. */
export function contextWindow(sources: WindowSources): number | null {
  return sources.cached ?? sources.configured ?? BUILT_IN_WINDOWS.get(`${sources.provider}/${sources.model}`) ?? null;
}
