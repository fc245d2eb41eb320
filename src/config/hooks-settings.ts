/**
 * The `hooks` section of `settings.jsonc`: commands run around tool calls,
 * prompts and stops (docs/settings.md, "Hooks"; what they receive and answer
 * in docs/features/runner.md, "Hooks").
 *
 * Per event a list of `{ matcher?, command, args?, timeout_ms? }`; `matcher`
 * only on the two tool events. The lists of both files are kept apart, each
 * hook with the file it came from: a global hook runs as written, a project
 * hook only once its canonical definition is approved (`src/hooks/`), so a
 * project file adds hooks but can neither change nor remove the user's.
 *
 * Startup loads this module only when a settings file has a `hooks` key
 * (`settings-load.ts`); `config check` and the published JSON Schema take the
 * complete schema from `mcp-settings.ts`.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { hasLoneSurrogate } from "../util/utf8.ts";

/** The hook events, in the order `hooks list` shows them. */
export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"] as const;
/** One hook event. */
export type HookEvent = typeof HOOK_EVENTS[number];

/** Default `timeout_ms`. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** Bounds of `timeout_ms`. */
export const HOOK_TIMEOUT_BOUNDS = { min: 100, max: 600_000 } as const;
/** Most hooks one file lists for one event. */
export const MAX_HOOKS_PER_EVENT = 32;
/** A matcher: an exposed tool name, or a pattern where `*` stands for any run of characters. */
export const HOOK_MATCHER: RegExp = /^[A-Za-z0-9_*.-]{1,128}$/;

const wellFormed = v.check((text: string) => !hasLoneSurrogate(text));
// deno-lint-ignore no-control-regex -- matching controls is the point
const NO_CONTROLS = /^[^\u0000-\u001F\u007F-\u009F]+$/;
// deno-lint-ignore no-control-regex -- a NUL cannot pass through argv
const NO_NUL = /^[^\u0000]*$/;
const described = v.description;

const common = {
  command: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(4096),
    v.regex(NO_CONTROLS),
    wellFormed,
    described("The program: an absolute path, a path relative to the workspace, or a name looked up on PATH. No shell unless you name one (sh with args [\"-c\", \"…\"])."),
  ),
  args: v.exactOptional(v.pipe(
    v.array(v.pipe(v.string(), v.maxLength(32_768), v.maxBytes(32_768), v.regex(NO_NUL), wellFormed)),
    v.maxLength(1024),
    described("The program's arguments."),
  )),
  timeout_ms: v.exactOptional(v.pipe(
    v.number(),
    v.integer(),
    v.minValue(HOOK_TIMEOUT_BOUNDS.min),
    v.maxValue(HOOK_TIMEOUT_BOUNDS.max),
    described(`Killed with its process group after this long, ${HOOK_TIMEOUT_BOUNDS.min}-${HOOK_TIMEOUT_BOUNDS.max} ms; default ${DEFAULT_HOOK_TIMEOUT_MS}.`),
  )),
};

const ToolHookSchema = exactObject({
  matcher: v.exactOptional(v.pipe(v.string(), v.regex(HOOK_MATCHER), described("The exposed tool name, or a pattern with * wildcards; absent: every tool."))),
  ...common,
});
const TurnHookSchema = exactObject(common);

const list = <TSchema extends v.GenericSchema>(entry: TSchema, what: string) =>
  v.exactOptional(v.pipe(v.array(entry), v.maxLength(MAX_HOOKS_PER_EVENT), described(`${what} Run in the order listed, the global file's first.`)));

/** The valibot schema of the `hooks` section. */
export const HooksSettingsSchema = v.pipe(
  exactObject({
    PreToolUse: list(ToolHookSchema, "Before a tool call is approved and run; may deny it, ask for approval, or skip an ask."),
    PostToolUse: list(ToolHookSchema, "After a tool call ran; may add text for the model."),
    UserPromptSubmit: list(TurnHookSchema, "Before a turn's first model request; may block the turn or add context."),
    Stop: list(TurnHookSchema, "When the model answers without calling a tool; may ask it to continue."),
  }),
  described("Hooks: commands run around tool calls, prompts and stops. A project file's hooks run only once approved with `magi-code hooks approve`."),
);

/** One hook as a file writes it. */
export interface HookSettings {
  readonly matcher?: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly timeout_ms?: number;
}

/** The `hooks` section of one file. */
export type HooksSettings = { readonly [E in HookEvent]?: readonly HookSettings[] };

/** Checks a file's `hooks` section; null when it is invalid. */
export function parseHooksSettings(raw: unknown): HooksSettings | null {
  const parsed = v.safeParse(HooksSettingsSchema, raw);
  return parsed.success ? parsed.output satisfies HooksSettings : null;
}

/** One configured hook, with the file it came from. */
export interface ConfiguredHook {
  readonly event: HookEvent;
  /** Null: every tool (and always on the events without tools). */
  readonly matcher: string | null;
  /** As written. */
  readonly command: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
  /** The settings file holding it: what a project hook's approval is bound to. */
  readonly source: string;
  /** Whether it comes from the project file, so it runs only once approved. */
  readonly project: boolean;
}

/** Every hook of both files, each event's global hooks first, each file's in its order. */
export function configuredHooks(global: { file: string; hooks?: HooksSettings }, project: { file: string; hooks?: HooksSettings } | null): ConfiguredHook[] {
  const layers = [{ ...global, project: false }, ...(project === null ? [] : [{ ...project, project: true }])];
  return HOOK_EVENTS.flatMap((event) =>
    layers.flatMap((layer) =>
      (layer.hooks?.[event] ?? []).map((hook): ConfiguredHook => ({
        event,
        matcher: hook.matcher ?? null,
        command: hook.command,
        args: [...(hook.args ?? [])],
        timeoutMs: hook.timeout_ms ?? DEFAULT_HOOK_TIMEOUT_MS,
        source: layer.file,
        project: layer.project,
      }))
    )
  );
}

/** Whether `matcher` selects the exposed tool name `tool`: null matches every tool, `*` any run of characters. */
export function matchesTool(matcher: string | null, tool: string): boolean {
  if (matcher === null) return true;
  const parts = matcher.split("*");
  if (parts.length === 1) return matcher === tool;
  if (!tool.startsWith(parts[0]!) || !tool.endsWith(parts.at(-1)!)) return false;
  let at = parts[0]!.length;
  const end = tool.length - parts.at(-1)!.length;
  if (at > end) return false;
  for (const middle of parts.slice(1, -1)) {
    const found = tool.indexOf(middle, at);
    if (found === -1 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}
