/**
 * The `task` tool as the model sees it: its arguments, exactly `profile`,
 * `description` and `prompt`, and a description listing the profiles it
 * may delegate to, each with its own description, so the model can choose.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { PROFILE_NAME } from "../config/agent-settings.ts";
import type { ToolSpec } from "../runner/providers/conversation.ts";
import { TASK_TOOL } from "../runner/delegation.ts";

/** Longest `description`, in characters: a few words for the user. */
export const MAX_TASK_DESCRIPTION = 200;
/** Longest `prompt`, in characters. */
export const MAX_TASK_PROMPT = 65_536;

const PROFILE_TEXT = "The subagent profile to delegate to, one of those listed in this tool's description.";
const DESCRIPTION_TEXT = "A short description of the task (3-10 words), shown to the user.";
const PROMPT_TEXT = "The task in full: the subagent sees nothing of this conversation, only this prompt. Say what to find or do and what to report back.";

/** Parameters of `task`. */
export const TaskParams = exactObject({
  profile: v.pipe(v.string(), v.maxLength(64), v.regex(PROFILE_NAME), v.description(PROFILE_TEXT)),
  description: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_TASK_DESCRIPTION), v.description(DESCRIPTION_TEXT)),
  prompt: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_TASK_PROMPT), v.description(PROMPT_TEXT)),
});

/** Parsed `task` parameters. */
export type TaskParams = v.InferOutput<typeof TaskParams>;

/** What the spec says of one profile that may be delegated to. */
export interface DelegableProfile {
  readonly name: string;
  readonly description: string;
}

/** The tool's spec for `profiles` (in name order), which must not be empty. */
export function taskSpec(profiles: readonly DelegableProfile[]): ToolSpec {
  const listed = profiles.map((profile) => `- ${profile.name}: ${profile.description.replace(/\s+/g, " ").trim()}`).join("\n");
  return {
    name: TASK_TOOL,
    description: "Delegates a self-contained task to a subagent, which works in the same workspace with its own conversation " +
      "and tools and answers with one final report, which this tool returns. Give it everything it needs in the prompt. " +
      "Several task calls in one message run at the same time. Subagents cannot delegate further. Profiles:\n" + listed,
    parameters: {
      type: "object",
      properties: {
        profile: { type: "string", maxLength: 64, pattern: PROFILE_NAME.source, description: PROFILE_TEXT },
        description: { type: "string", minLength: 1, maxLength: MAX_TASK_DESCRIPTION, description: DESCRIPTION_TEXT },
        prompt: { type: "string", minLength: 1, maxLength: MAX_TASK_PROMPT, description: PROMPT_TEXT },
      },
      required: ["profile", "description", "prompt"],
      additionalProperties: false,
    },
  };
}
