/**
 * The effort policy: which efforts a model permits (`effort_support`,
 * `permitted_efforts`) and what a requested effort becomes (`effective_effort`).
 * The spec makes built-in backend profiles authoritative and forbids
 * inventing explicit levels for unknown models, so this is one table of
 * model families with the source of each row, and everything it does not
 * know is `unknown` with only `default` permitted.
 *
 * A level is permitted only when the request builders send it as itself:
 * the chat builder sends `xhigh` and `max` as `high`, the Responses builder
 * sends `max` as `xhigh`, and Anthropic 4.6 runs `xhigh` as `high`
 * (docs/decisions/provider-library.md, "Effort mapping"). Permitting an
 * effort that is silently sent as another would be the normalisation the
 * spec rejects for deliberate mutations.
 *
 * @module
 */

import { parseClaudeModel } from "./claude-model.ts";
import type { Effort } from "./efforts.ts";

/** `effort_support` as the wire spells it. */
export type EffortSupport = "supported" | "unsupported" | "unknown";

/** What a model permits. `permitted` always starts with `default`, the no-override policy. */
export interface EffortPolicy {
  readonly support: EffortSupport;
  readonly permitted: readonly Effort[];
}

/**
 * What a provider's model list said about reasoning controls, cached by a
 * refresh: `true`/`false` when it listed supported parameters (OpenRouter's
 * `supported_parameters`), `null` when it said nothing.
 */
export type ReasoningHint = boolean | null;

const UNKNOWN: EffortPolicy = Object.freeze({ support: "unknown", permitted: Object.freeze(["default"] as const) });
const UNSUPPORTED: EffortPolicy = Object.freeze({ support: "unsupported", permitted: Object.freeze(["default"] as const) });
const supported = (...levels: Effort[]): EffortPolicy => Object.freeze({ support: "supported", permitted: Object.freeze<Effort[]>(["default", ...levels]) });

// Levels each API's builder sends unchanged (request-chat.ts, request-responses.ts).
const CHAT_DISTINCT: ReadonlySet<Effort> = new Set(["low", "medium", "high"]);
const RESPONSES_DISTINCT: ReadonlySet<Effort> = new Set(["low", "medium", "high", "xhigh"]);

// Gateway prefixes such as `openai/` (OpenRouter) before the model's own id.
const GATEWAY = String.raw`^(?:[a-z0-9_-]+/)*`;

interface OpenAiRow {
  readonly pattern: RegExp;
  /** Levels the model itself accepts; `null` when it has no reasoning control. */
  readonly levels: readonly Effort[] | null;
}

/**
 * OpenAI families, first match wins. Sources: OpenAI's reasoning guide and
 * model pages (platform.openai.com/docs/guides/reasoning, /docs/models):
 * `reasoning.effort` / `reasoning_effort` take low, medium and high on
 * o1, o3, o3-mini, o4-mini and the GPT-5 family, and also xhigh on
 * gpt-5.1-codex-max and GPT-5.2 and later; the open-weight gpt-oss models
 * take low, medium and high (openai.com/index/introducing-gpt-oss). o1-mini
 * and o1-preview predate the parameter; the `-chat` GPT-5 variants and the
 * GPT-4/3.5 families are not reasoning models.
 */
const OPENAI_ROWS: readonly OpenAiRow[] = [
  { pattern: new RegExp(`${GATEWAY}gpt-5(?:\\.\\d+)?(?:-[a-z0-9]+)*-chat(?:-latest)?$`, "i"), levels: null },
  { pattern: new RegExp(`${GATEWAY}gpt-5\\.1-codex-max(?:-[a-z0-9]+)*$`, "i"), levels: ["low", "medium", "high", "xhigh"] },
  { pattern: new RegExp(`${GATEWAY}gpt-5\\.(?:[2-9]|\\d{2,})(?:[-.][a-z0-9]+)*$`, "i"), levels: ["low", "medium", "high", "xhigh"] },
  { pattern: new RegExp(`${GATEWAY}gpt-5(?:\\.[01])?(?:-[a-z0-9]+)*$`, "i"), levels: ["low", "medium", "high"] },
  { pattern: new RegExp(`${GATEWAY}o1-(?:mini|preview)(?:-[a-z0-9]+)*$`, "i"), levels: null },
  { pattern: new RegExp(`${GATEWAY}o[134](?:-[a-z0-9]+)*$`, "i"), levels: ["low", "medium", "high"] },
  { pattern: new RegExp(`${GATEWAY}gpt-oss(?:[-:][a-z0-9.]+)*$`, "i"), levels: ["low", "medium", "high"] },
  { pattern: new RegExp(`${GATEWAY}(?:gpt-4|gpt-3\\.5|chatgpt-4o)`, "i"), levels: null },
];

/**
 * Claude families on the Messages API. Sources: Anthropic's extended- and
 * adaptive-thinking pages and the effort page
 * (platform.claude.com/docs/en/build-with-claude/{extended-thinking,adaptive-thinking,effort}),
 * models overview for output limits. Claude 3.0/3.5 have no thinking.
 * 3.7 up to 4.5 take a thinking budget; the builder asks for
 * `max_tokens` = 16,384 + budget, which must stay within the model's output
 * limit: Opus 4 and 4.1 (32,000) fit low and medium only, the others
 * (64,000) everything but max (16,384 + 48,000 = 64,384). 4.6 takes
 * `output_config.effort` low..high and max but no xhigh (sent as high), and
 * Sonnet 4.6's 64,000-token limit again leaves out max. 4.7 and later
 * take all five.
 */
function claudePolicy(model: string): EffortPolicy {
  const claude = parseClaudeModel(model);
  if (claude === null) return UNKNOWN;
  const { family, major, minor } = claude;
  const version = major * 100 + minor;
  if (version < 307) return UNSUPPORTED;
  if (version < 400) return supported("low", "medium", "high", "xhigh");
  if (version < 406) return family === "opus" && version < 402 ? supported("low", "medium") : supported("low", "medium", "high", "xhigh");
  if (version === 406) return family === "sonnet" ? supported("low", "medium", "high") : supported("low", "medium", "high", "max");
  return supported("low", "medium", "high", "xhigh", "max");
}

function openAiPolicy(model: string, distinct: ReadonlySet<Effort>): EffortPolicy | null {
  // A loop, not `find` with a closure: a catalog asks for 2,048 policies at once.
  let row: OpenAiRow | undefined;
  for (let index = 0; index < OPENAI_ROWS.length && row === undefined; index++) {
    if (OPENAI_ROWS[index]!.pattern.test(model)) row = OPENAI_ROWS[index];
  }
  if (row === undefined) return null;
  if (row.levels === null) return UNSUPPORTED;
  return supported(...row.levels.filter((level) => distinct.has(level)));
}

/**
 * The policy of `model` served over `api`. Built-in rows win; an
 * `openai-chat` model they do not know follows its cached hint (supported
 * levels are then the chat parameter's low, medium and high); anything else
 * is unknown.
 */
export function effortPolicy(api: string, model: string, hint: ReasoningHint): EffortPolicy {
  if (api === "anthropic-messages") return claudePolicy(model);
  if (api === "openai-responses") return openAiPolicy(model, RESPONSES_DISTINCT) ?? UNKNOWN;
  if (api !== "openai-chat") return UNKNOWN;
  const known = openAiPolicy(model, CHAT_DISTINCT);
  if (known !== null) return known;
  if (hint === true) return supported("low", "medium", "high");
  return hint === false ? UNSUPPORTED : UNKNOWN;
}

/**
 * The effort a turn sends for `requested`: itself when permitted under
 * supported controls, `default` for a saved request the model no longer
 * permits, `null` (not applicable / unavailable) when controls are
 * unsupported or unknown. A turn sends `null` as no override.
 */
export function effectiveEffort(policy: EffortPolicy, requested: Effort): Effort | null {
  if (policy.support !== "supported") return null;
  return policy.permitted.includes(requested) ? requested : "default";
}
