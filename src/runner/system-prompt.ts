/**
 * The system prompt of every turn: magi-code's own instructions, then the
 * instructions chain in its order (the user's global `AGENTS.md`, the
 * project's from its root down to the workspace, the files
 * `instructions.paths` names), so the most specific guidance comes last and
 * wins where they disagree, each file introduced by where it came from so
 * the model can tell a package's rules from the repository's; then the
 * enabled skills' names and descriptions (`skills-prompt.ts`); last the
 * agent profile's body, which says what kind of agent this window runs.
 *
 * @module
 */

import type { Instruction } from "../config/instructions.ts";
import { instructionsSection } from "../config/instructions-section.ts";
import type { Skill } from "../config/skills.ts";
import { skillsSection } from "./skills-prompt.ts";

const BASE = `You are magi-code, a coding agent working in the user's workspace through tools.

- Use the tools to inspect files before changing them; prefer small, exact edits (edit_file) over rewriting whole files.
- Paths are relative to the workspace root. Files outside the workspace, inside .git and in magi-code's own storage are off limits.
- Some tool calls need the user's approval; a denied call means: do not retry it, explain or take another way.
- Shell commands run without a terminal and with a timeout; do not start interactive or long-running programs.
- Keep answers concise. Say what you changed and how you checked it.`;

/** Builds the system prompt from the base instructions, the loaded `files`, in order, the enabled `skills` and `profile`'s body. */
export function systemPrompt(
  files: readonly Instruction[],
  workspace: string,
  skills: readonly Pick<Skill, "name" | "description">[] = [],
  profile?: { readonly name: string; readonly body: string },
): string {
  const sections = [BASE, `The workspace root is ${workspace}.`];
  const instructions = instructionsSection(files);
  if (instructions !== null) sections.push(instructions);
  const listed = skillsSection(skills);
  if (listed !== null) sections.push(listed);
  if (profile !== undefined && profile.body !== "") sections.push(`The "${profile.name}" agent profile this window runs as:\n\n${profile.body}`);
  return sections.join("\n\n");
}
