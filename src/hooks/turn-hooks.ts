/**
 * The runner's hooks port (`runner/hooks-port.ts`) over the hooks that run:
 * every global hook and every approved project hook (`startup.ts`).
 *
 * Order and merge: the hooks of one event run one after another, the global
 * file's in its order, then the project file's; a tool event runs only the
 * hooks whose matcher selects the tool. The first hook that denies or
 * blocks ends the event: its reason wins and the hooks after it do not run.
 * Otherwise, for `PreToolUse`, any `ask` beats any `allow`; texts to add
 * (`additional_context`, a `PostToolUse` hook's exit-2 stderr) are joined in
 * run order. A failed hook is reported as one `hook_failed` diagnostic and
 * counts as having said nothing. A cancelled run stops at the hook it is in,
 * whose process group is killed.
 *
 * @module
 */

import { type HookEvent, matchesTool } from "../config/hooks-settings.ts";
import type { Runtime } from "../host/runtime.ts";
import type { HookedCall, HookScope, PreToolVerdict, PromptVerdict, TurnHooks } from "../runner/hooks-port.ts";
import { clampUtf8 } from "../util/utf8.ts";
import { type HookAnswer, hookAnswer, MAX_HOOK_TEXT_BYTES } from "./hook-answer.ts";
import { runHookProcess } from "./hook-process.ts";

/** A hook that runs, its command resolved. */
export interface RunnableHook {
  readonly id: string;
  readonly event: HookEvent;
  readonly matcher: string | null;
  /** Null: not found (a global hook's), so it fails unrun. */
  readonly command: string | null;
  readonly args: readonly string[];
  readonly timeoutMs: number;
}

const DENIED = "A hook denied this tool call.";
const BLOCKED = "A hook blocked this prompt.";
const GO_ON = "A hook asked you not to stop yet: continue the task.";

/** What a hook is told besides the event, the session and the cwd. */
type EventInput =
  | { readonly tool: HookedCall; readonly result?: { readonly ok: boolean; readonly summary: string } }
  | { readonly prompt: string }
  | { readonly final_text: string };

/** The decisive answer of an event's hooks (a deny or a block), if any, and the texts to add. */
interface EventOutcome {
  readonly decisive: { readonly reason: string | null } | null;
  readonly answers: readonly Extract<HookAnswer, { kind: "proceed" | "block" }>[];
}

class ConfiguredTurnHooks implements TurnHooks {
  constructor(
    readonly runtime: Runtime,
    readonly hooks: readonly RunnableHook[],
    readonly cwd: string,
  ) {}

  async #run(scope: HookScope, event: HookEvent, input: EventInput): Promise<EventOutcome> {
    const tool = "tool" in input ? input.tool.name : null;
    const selected = this.hooks.filter((hook) => hook.event === event && (tool === null || matchesTool(hook.matcher, tool)));
    const answers: Extract<HookAnswer, { kind: "proceed" | "block" }>[] = [];
    const line = JSON.stringify({ event, session_id: scope.sessionId, cwd: this.cwd, ...input });
    for (const hook of selected) {
      if (scope.signal.aborted) break;
      const spec = { command: hook.command, args: hook.args, cwd: this.cwd, timeoutMs: hook.timeoutMs, input: line, secrets: scope.secrets };
      const ended = spec.command === null ? { kind: "not_started" as const } : await runHookProcess(this.runtime, { ...spec, command: spec.command }, scope.signal);
      const answer = hookAnswer(event, ended, scope.secrets);
      if (answer.kind === "cancelled") break;
      if (answer.kind === "failed") {
        await scope.report(`The ${event} hook ${hook.id} failed: it ${answer.why}. It was ignored.`);
        continue;
      }
      answers.push(answer);
      // PostToolUse's exit 2 cannot undo a call that already ran: it is only feedback.
      if (event !== "PostToolUse" && (answer.kind === "block" || answer.decision === "deny")) return { decisive: { reason: answer.reason }, answers };
    }
    return { decisive: null, answers };
  }

  async preToolUse(scope: HookScope, call: HookedCall): Promise<PreToolVerdict> {
    const { decisive, answers } = await this.#run(scope, "PreToolUse", { tool: call });
    if (decisive !== null) return { decision: "deny", reason: decisive.reason ?? DENIED };
    const ask = answers.find((answer) => answer.kind === "proceed" && answer.decision === "ask");
    if (ask !== undefined) return { decision: "ask", reason: ask.reason };
    return { decision: answers.some((answer) => answer.kind === "proceed" && answer.decision === "allow") ? "allow" : "none" };
  }

  async postToolUse(scope: HookScope, call: HookedCall, result: { readonly ok: boolean; readonly summary: string }): Promise<string | null> {
    const { answers } = await this.#run(scope, "PostToolUse", { tool: call, result });
    return joined(answers.map((answer) => answer.kind === "block" ? answer.reason : answer.context));
  }

  async userPromptSubmit(scope: HookScope, prompt: string): Promise<PromptVerdict> {
    const { decisive, answers } = await this.#run(scope, "UserPromptSubmit", { prompt });
    if (decisive !== null) return { blocked: true, reason: decisive.reason ?? BLOCKED };
    return { blocked: false, context: joined(answers.map((answer) => answer.kind === "proceed" ? answer.context : null)) };
  }

  async stop(scope: HookScope, finalText: string): Promise<string | null> {
    const { decisive } = await this.#run(scope, "Stop", { final_text: finalText });
    return decisive === null ? null : decisive.reason ?? GO_ON;
  }
}

function joined(texts: readonly (string | null)[]): string | null {
  const present = texts.filter((text): text is string => text !== null);
  return present.length === 0 ? null : clampUtf8(present.join("\n\n"), MAX_HOOK_TEXT_BYTES);
}

/** The hooks port over `hooks`, run in the canonical workspace `cwd`. */
export function createTurnHooks(runtime: Runtime, hooks: readonly RunnableHook[], cwd: string): TurnHooks {
  return new ConfiguredTurnHooks(runtime, hooks, cwd);
}
