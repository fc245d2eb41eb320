/**
 * The `agent.compaction` settings: whether a run compacts its conversation
 * automatically, and at what fill of the model's context window
 * (docs/settings.md, docs/features/runner.md "Compaction"); and that
 * window. One module, because startup validates both settings before it
 * answers `initialize`.
 *
 * The default threshold, 0.8, leaves a fifth of the window for what the
 * runner cannot measure before sending: the reply (Anthropic and most chat
 * servers count `max_tokens` against the window), the step's own additions
 * (estimated from bytes, which can under-count), and the summary the
 * compaction request itself must produce within the same window. Below 0.5
 * a compaction could not free enough for the summary and the kept turn to
 * sit under the threshold again; above 0.95 the estimate's error alone
 * crosses the window before compaction starts.
 *
 * The window is how many tokens a model's context holds. It comes
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
import { exactObject } from "../util/exact-object.ts";

/** The fill of the window at which a run compacts when settings name none. */
export const DEFAULT_COMPACTION_THRESHOLD = 0.8;
/** The smallest threshold accepted. */
export const MIN_COMPACTION_THRESHOLD = 0.5;
/** The largest threshold accepted. */
export const MAX_COMPACTION_THRESHOLD = 0.95;

/** The `agent.compaction` section of one settings file. */
export const CompactionSettingsSchema = v.pipe(
  exactObject({
    enabled: v.exactOptional(v.pipe(
      v.boolean(),
      v.description("Compact the conversation automatically when the context fills up or the provider says it is too long; default true."),
    )),
    threshold: v.exactOptional(v.pipe(
      v.number(),
      v.minValue(MIN_COMPACTION_THRESHOLD),
      v.maxValue(MAX_COMPACTION_THRESHOLD),
      v.description(
        `Fill of the model's context window at which a run compacts before its next request, ${MIN_COMPACTION_THRESHOLD}-${MAX_COMPACTION_THRESHOLD}; default ${DEFAULT_COMPACTION_THRESHOLD}.`,
      ),
    )),
  }),
  v.description("Automatic compaction of long conversations."),
);

/** A validated `agent.compaction` section, or the merge of two. */
export interface CompactionSettings {
  readonly enabled?: boolean;
  readonly threshold?: number;
}

/** What a run does: both fields decided. */
export interface CompactionPolicy {
  readonly enabled: boolean;
  readonly threshold: number;
}

/**
 * The `compaction` field of two merged `agent` sections: both files'
 * sections merged field by field, the project winning; nothing when
 * neither file has one.
 */
export function mergeCompaction(
  global: { readonly compaction?: CompactionSettings } | undefined,
  project: { readonly compaction?: CompactionSettings } | undefined,
): { readonly compaction?: CompactionSettings } {
  const [g, p] = [global?.compaction, project?.compaction];
  return g === undefined && p === undefined ? {} : { compaction: { ...g, ...p } };
}

/** The policy `settings` describe, defaults filled in. */
export function compactionPolicy(settings: CompactionSettings | undefined): CompactionPolicy {
  return { enabled: settings?.enabled ?? true, threshold: settings?.threshold ?? DEFAULT_COMPACTION_THRESHOLD };
}

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
