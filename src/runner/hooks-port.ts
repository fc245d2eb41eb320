/**
 * The hooks port: what a run asks of the user's hooks (docs/features/runner.md,
 * "Hooks"). `src/hooks/` implements it and is loaded only when a hook is
 * configured, so the runner never imports it; a run without hooks has none.
 *
 * Every text a method returns is for the model and already redacted and
 * bounded; a hook that failed has been reported through `report` and counts
 * as having said nothing.
 *
 * @module
 */

/** What one hook call needs from its run. */
export interface HookScope {
  readonly sessionId: string;
  /** The run's cancellation: a hook still running is killed with its process group. */
  readonly signal: AbortSignal;
  /** Known secret values: kept from hooks' environment, redacted from what they say. */
  readonly secrets: readonly string[];
  /** Reports a hook failure (a fixed summary naming the hook) as one `hook_failed` diagnostic. */
  report(summary: string): Promise<void>;
}

/** The call a tool hook is about: the exposed tool name and the prepared call's canonical arguments. */
export interface HookedCall {
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * What the `PreToolUse` hooks decided together: `deny` (the call does not
 * run; `reason` is the model's result), `ask` (ask the user even where the
 * policy allows), `allow` (skip an `ask` policy), or `none`.
 */
export type PreToolVerdict =
  | { readonly decision: "none" | "allow" }
  | { readonly decision: "ask"; readonly reason: string | null }
  | { readonly decision: "deny"; readonly reason: string };

/** The outcome of the `UserPromptSubmit` hooks: blocked with a reason, or context to add (null: none). */
export type PromptVerdict =
  | { readonly blocked: true; readonly reason: string }
  | { readonly blocked: false; readonly context: string | null };

/** The configured hooks of one child, as runs call them. */
export interface TurnHooks {
  /** After the policy and the call's preparation, before any approval. */
  preToolUse(scope: HookScope, call: HookedCall): Promise<PreToolVerdict>;
  /** After the call ran; text to add to its result for the model, or null. */
  postToolUse(scope: HookScope, call: HookedCall, result: { readonly ok: boolean; readonly summary: string }): Promise<string | null>;
  /** After the prompt is durable, before the first model request. */
  userPromptSubmit(scope: HookScope, prompt: string): Promise<PromptVerdict>;
  /** When the model answered without calling a tool; a reason to go on, or null to stop. */
  stop(scope: HookScope, finalText: string): Promise<string | null>;
}
