/**
 * `skill`: loads one enabled Agent Skill, the second step of progressive
 * disclosure (the system prompt lists names and descriptions; this returns
 * the instructions). It reads nothing the startup snapshot does not hold
 * except the skill directory's listing: the `SKILL.md` body as validated at
 * startup, then the skill's files as absolute-path-relative names, which the
 * model reads with `read_file` (allowed inside enabled skills' directories)
 * and runs with `shell`, each call under its own policy. Offered only when
 * at least one skill is enabled; read-only, policy `allow` by default.
 *
 * The listing is bounded: {@link MAX_LIST_DEPTH} levels below the skill
 * directory, {@link MAX_LIST_READS} directory entries read and
 * {@link MAX_LISTED_FILES} files shown; hidden entries and `node_modules`
 * are skipped, and symlinks are neither listed nor followed.
 *
 * @module
 */

import * as v from "valibot";
import type { Skill } from "../../config/skills.ts";
import { MAX_SKILL_NAME, SKILL_NAME } from "../../config/skills-settings.ts";
import { exactObject } from "../../util/exact-object.ts";
import { joinPath } from "../../util/paths.ts";
import { count, finishResult } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";

/** The tool's name, and its key under `tools` in settings. */
export const SKILL_TOOL = "skill";
/** Directory levels below a skill directory that are listed. */
export const MAX_LIST_DEPTH = 4;
/** Directory entries read at most while listing one skill. */
export const MAX_LIST_READS = 512;
/** Files shown at most. */
export const MAX_LISTED_FILES = 200;

const NAME_TEXT = "The skill's name, exactly as the list of available skills in the system prompt spells it.";

/** Parameters of `skill`. */
export const SkillParams = exactObject({
  name: v.pipe(v.string(), v.maxLength(MAX_SKILL_NAME), v.regex(SKILL_NAME), v.description(NAME_TEXT)),
});

/** Parsed `skill` parameters. */
export type SkillParams = v.InferOutput<typeof SkillParams>;

interface Listing {
  readonly files: readonly string[];
  /** Whether a bound stopped the listing. */
  readonly cut: boolean;
}

/** The skill's files below `directory`, relative to it, breadth first and in name order per directory. */
async function listFiles(context: ToolContext, directory: string): Promise<Listing> {
  const files: string[] = [];
  const queue: { path: string; relative: string; depth: number }[] = [{ path: directory, relative: "", depth: 1 }];
  let reads = 0;
  let cut = false;
  while (queue.length > 0 && !context.signal.aborted) {
    const current = queue.shift()!;
    const entries = await context.runtime.fs.readDir(current.path, MAX_LIST_READS - reads).catch(() => []);
    if (reads + entries.length > MAX_LIST_READS) cut = true;
    const kept = entries.slice(0, MAX_LIST_READS - reads);
    reads += kept.length;
    kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of kept) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const relative = current.relative === "" ? entry.name : `${current.relative}/${entry.name}`;
      if (entry.kind === "directory") {
        if (current.depth < MAX_LIST_DEPTH) queue.push({ path: joinPath(current.path, entry.name), relative, depth: current.depth + 1 });
        else cut = true;
      } else if (entry.kind === "file" && relative !== "SKILL.md") {
        if (files.length === MAX_LISTED_FILES) return { files, cut: true };
        files.push(relative);
      }
    }
    if (reads >= MAX_LIST_READS && queue.length > 0) return { files, cut: true };
  }
  return { files, cut };
}

function render(skill: Skill, listing: Listing): string {
  const lines = [
    `<skill name="${skill.name}">`,
    skill.body === "" ? "(This skill has no instructions beyond its description.)" : skill.body,
    "</skill>",
    "",
    `Skill directory: ${skill.directory}`,
    "Paths in the skill are relative to that directory. Read its files with read_file using absolute paths; run its scripts " +
    "with shell. Each call needs the approval its tool needs: a skill never grants any.",
  ];
  if (listing.files.length > 0) lines.push("", `Files (${count(listing.files.length, "file")}${listing.cut ? ", listing incomplete" : ""}):`, ...listing.files);
  else if (!listing.cut) lines.push("", "The skill has no other files.");
  if (listing.cut) lines.push(`[Listing stopped at its bounds: ${MAX_LIST_DEPTH} levels, ${MAX_LIST_READS} entries, ${MAX_LISTED_FILES} files.]`);
  return lines.join("\n");
}

async function prepare(params: SkillParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const skill = context.skills?.find((item) => item.name === params.name);
  const label = `skill ${params.name}`;
  if (skill === undefined) {
    const output = `There is no enabled skill named ${JSON.stringify(params.name)}; the available skills are listed in the system prompt.`;
    return finishResult(false, output, `${label}: no such skill`, context.secrets);
  }
  return {
    action: `Load the skill ${skill.name}`,
    tooLongToShow: "The skill name is too long to show for approval.",
    mustAsk: false,
    async run() {
      const listing = await listFiles(context, skill.directory);
      return finishResult(true, render(skill, listing), `${label}: loaded, ${count(listing.files.length, "file")} listed`, context.secrets);
    },
  };
}

/** The `skill` tool. */
export const skillTool: Tool<SkillParams> = {
  name: SKILL_TOOL,
  description: "Load an Agent Skill by name: returns its instructions and the list of its files. Call it when the task matches " +
    "a skill's description in the system prompt, before starting the task.",
  schema: SkillParams,
  parameters: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: MAX_SKILL_NAME, pattern: SKILL_NAME.source, description: NAME_TEXT },
    },
    required: ["name"],
    additionalProperties: false,
  },
  prepare,
};
