/**
 * How the instructions chain reads in the system prompt: an opening line on
 * their order, then each file under a heading naming where it came from.
 * It lives beside the loader because the loader's total bound
 * (`instructions-bounds.ts`) covers this whole section, headings and notices
 * included, so both must measure the same text.
 *
 * @module
 */

/** Where an instructions file came from: `$MC_HOME`, the project chain, or `instructions.paths`. */
export type InstructionSource = "global" | "project" | "path";

/** The line before the first file. */
export const INSTRUCTIONS_ORDER = "Instructions follow, from the most general to the most specific: where two disagree, the later one wins.";

/** What separates the opening line, each heading and each file's text. */
export const SECTION_SEPARATOR = "\n\n";

/** The heading a file of `source`, read at `path`, is introduced by. */
export function instructionHeading(source: InstructionSource, path: string): string {
  switch (source) {
    case "global":
      return "The user's global instructions (AGENTS.md):";
    case "project":
      return `Project instructions (${path}):`;
    default:
      return `Further instructions (${path}, named in settings):`;
  }
}

/**
 * The instructions section for `files` in prompt order, or null when none
 * has text: the opening line, then each file's heading and trimmed text.
 */
export function instructionsSection(files: readonly { readonly source: InstructionSource; readonly path: string; readonly text: string }[]): string | null {
  const texts = files.flatMap((file) => {
    const text = file.text.trim();
    return text === "" ? [] : [`${instructionHeading(file.source, file.path)}${SECTION_SEPARATOR}${text}`];
  });
  return texts.length === 0 ? null : [INSTRUCTIONS_ORDER, ...texts].join(SECTION_SEPARATOR);
}
