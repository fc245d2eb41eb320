/**
 * A turn's token usage, summed over its provider requests, in one meaning
 * whatever the API: what the stored `usage` record holds and what the
 * negotiated `run.usage` event reports
 * (`docs/features/local-agent-extensions.md#runusage`).
 *
 * Prompt tokens always include cached ones, as the context meter counts
 * them (`context-meter.ts`, `inputTokens`): the OpenAI APIs count cache
 * hits inside `prompt_tokens` / `input_tokens`, Anthropic's `input_tokens`
 * leaves out `cache_read_input_tokens` and `cache_creation_input_tokens`,
 * which are added back. So a turn's input, the session's totals and how
 * full the context is read the same on every provider.
 *
 * @module
 */

import type { ProviderApi } from "../config/settings.ts";
import type { EventData } from "../protocol/events.ts";
import type { UsageRecord } from "../store/records.ts";
import { inputTokens } from "./context-meter.ts";
import type { Usage } from "./providers/events.ts";
import type { RunScope } from "./run-events.ts";
import type { SessionTokens } from "./journal-port.ts";

/** Adds `value` to `total`, where null means "not reported" and stays null until something is. */
function plus(total: number | null, value: number | null): number | null {
  return value === null ? total : (total ?? 0) + value;
}

/** One turn's usage, request by request. */
export class TurnUsage {
  readonly #api: ProviderApi;
  #answered = false;
  #reported = false;
  #input: number | null = null;
  #output: number | null = null;
  #cached: number | null = null;
  #reasoning: number | null = null;
  #lastPrompt: number | null = null;

  /** Sums usage reported by `api`'s requests. */
  constructor(api: ProviderApi) {
    this.#api = api;
  }

  /** Whether a provider answered one of the turn's requests (with any status). */
  get answered(): boolean {
    return this.#answered;
  }

  /**
   * Counts one request the provider answered; `usage` is what it reported,
   * null when nothing. A request that `measures` the context (a step, not
   * a compaction's summary request) also sets how full it is.
   */
  add(usage: Usage | null, measures = true): void {
    this.#answered = true;
    if (usage === null) return;
    this.#reported = true;
    const prompt = inputTokens(this.#api, usage);
    this.#input = plus(this.#input, prompt);
    this.#output = plus(this.#output, usage.output);
    this.#cached = plus(this.#cached, usage.cacheRead);
    this.#reasoning = plus(this.#reasoning, usage.reasoning);
    if (prompt !== null && measures) this.#lastPrompt = prompt;
  }

  /** The turn's `usage` record, or null when no request reported usage. */
  record(scope: RunScope, turnId: string, at: string): UsageRecord | null {
    if (!this.#reported) return null;
    return {
      v: 1,
      type: "usage",
      session_id: scope.session_id,
      at,
      turn_id: turnId,
      input_tokens: this.#input ?? 0,
      output_tokens: this.#output ?? 0,
      ...(this.#reasoning === null ? {} : { reasoning_tokens: this.#reasoning }),
      ...(this.#cached === null ? {} : { cached_input_tokens: this.#cached }),
    };
  }

  /**
   * The `run.usage` data, or null when no provider answered: a turn that
   * reached none has nothing to report. `session` holds the totals of the
   * session's stored turns before this one.
   */
  event(scope: RunScope, session: SessionTokens, contextWindow: number | null): EventData<"run.usage"> | null {
    if (!this.#answered) return null;
    return {
      ...scope,
      input_tokens: this.#input,
      output_tokens: this.#output,
      cached_input_tokens: this.#cached,
      reasoning_tokens: this.#reasoning,
      // The record stores an unreported count as 0, so these are what a reopen will sum.
      session_input_tokens: session.input + (this.#input ?? 0),
      session_output_tokens: session.output + (this.#output ?? 0),
      context_window: contextWindow,
      context_used: this.#lastPrompt,
    };
  }
}
