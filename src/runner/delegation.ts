/**
 * The runner's side of subagents: the `task` tool, which hands a task to
 * an agent profile running as a child run, lives a layer above
 * (`src/agents/` implements the port, `Delegation` in `run-config.ts`, and
 * loads only with the first task call), because it runs steps of its own.
 * The runner offers its tool spec, hands it the step's task calls, and
 * formats what a child's tool calls show the client (`subagentLabel`), so
 * the child's activities and approval prompts say which subagent ran them.
 *
 * @module
 */

import type { SubagentIdentity } from "./run-config.ts";
import { prefixWithinBytes, utf8ByteCount } from "../util/utf8.ts";
import { MAX_SUMMARY_BYTES } from "./tools/tool.ts";

export type { DelegatingStep, Delegation, SubagentIdentity } from "./run-config.ts";

/** The tool's name, as the model calls it and settings and profiles name it. */
export const TASK_TOOL = "task";

/**
 * What a child's tool activity or approval prompt shows before its own
 * text: `[explore t3] ` for an activity, `[explore t3: Find the loader] `
 * for an approval, where `t3` is the task call's `subagent` activity. An
 * approval's action must stay whole, so the description is cut to the room
 * left, and dropped when there is none; null when not even `[explore t3] `
 * fits before `text` in a summary.
 */
export function subagentLabel(identity: SubagentIdentity, text: string, withDescription: boolean): string | null {
  const short = `[${identity.profile} ${identity.activityId}] `;
  const room = MAX_SUMMARY_BYTES - utf8ByteCount(text);
  if (utf8ByteCount(short) > room) return null;
  if (!withDescription || identity.description === "") return short;
  const spare = room - utf8ByteCount(short) - 2;
  if (spare <= 0) return short;
  const cut = identity.description.slice(0, prefixWithinBytes(identity.description, spare));
  return cut === "" ? short : `[${identity.profile} ${identity.activityId}: ${cut}] `;
}

/** `prompt` (an approval prompt, or null for one that cannot be shown) led by the subagent's label, when `identity` is a subagent's; null when the label leaves the prompt no room. */
export function labelPrompt(identity: SubagentIdentity | null | undefined, prompt: string | null): string | null {
  if (identity == null || prompt === null) return prompt;
  const label = subagentLabel(identity, prompt, true);
  return label === null ? null : label + prompt;
}
