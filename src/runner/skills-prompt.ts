/**
 * The system prompt's skills section, the first step of progressive
 * disclosure: each enabled skill's name and description and how to load one
 * with the `skill` tool. The list of skills is bounded to
 * {@link MAX_SKILL_LIST_BYTES}: when the descriptions do not all fit, the
 * room left beside the names is shared out, shortest descriptions first,
 * and each longer one is cut with an ellipsis, so every skill stays listed
 * and none crowds the others out.
 *
 * @module
 */

import type { Skill } from "../config/skills.ts";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";

/** UTF-8 bytes the list of skills (one `- name: description` line each) may take in the system prompt. */
export const MAX_SKILL_LIST_BYTES = 16_384;

const INTRO = "Skills are packaged instructions (with optional scripts and references) for particular tasks. When a task matches " +
  "a skill's description, call the skill tool with its name before you start, and follow what it returns. Read a skill's " +
  "files with read_file and run its scripts with shell: every call keeps its usual approval, whatever the skill says.";

/** The `- name: description` lines of `skills`, within {@link MAX_SKILL_LIST_BYTES} all together. */
export function skillLines(skills: readonly Pick<Skill, "name" | "description">[]): string[] {
  const prefix = (skill: Pick<Skill, "name">) => `- ${skill.name}: `;
  // Each line's own bytes beside its description: the prefix and the newline that joins it.
  let room = MAX_SKILL_LIST_BYTES - skills.reduce((sum, skill) => sum + utf8ByteCount(prefix(skill)) + 1, 0);
  const shares = new Map<Pick<Skill, "name">, number>();
  const bySize = [...skills].sort((a, b) => utf8ByteCount(a.description) - utf8ByteCount(b.description));
  bySize.forEach((skill, index) => {
    const share = Math.min(utf8ByteCount(skill.description), Math.floor(Math.max(0, room) / (bySize.length - index)));
    shares.set(skill, share);
    room -= share;
  });
  return skills.map((skill) => prefix(skill) + clampUtf8(skill.description, shares.get(skill)!));
}

/** The skills section for the system prompt, or null when no skill is enabled. */
export function skillsSection(skills: readonly Pick<Skill, "name" | "description">[]): string | null {
  if (skills.length === 0) return null;
  return `${INTRO}\n\nAvailable skills:\n${skillLines(skills).join("\n")}`;
}
