/**
 * Just enough Markdown for the documentation tests: fenced code blocks (what
 * tests/readme.test.ts runs), inline links outside code (what
 * tests/package.test.ts resolves inside the packed tarball) and the anchors
 * GitHub gives headings.
 *
 * @module
 */

/** One fenced code block. */
export interface CodeBlock {
  /** The info string's first word: `sh`, `js`, `json`, or empty. */
  readonly lang: string;
  /** The block's text, ending with a newline. */
  readonly code: string;
  /** The 1-based line of its opening fence. */
  readonly line: number;
  /** The text between the previous block (or the start) and this one. */
  readonly before: string;
}

const FENCE = /^(```+|~~~+)\s*([^\s`]*)[^\n]*$/;

/** The fenced code blocks of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  let prose: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]!);
    if (open === null) {
      prose.push(lines[index]!);
      continue;
    }
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !lines[end]!.startsWith(open[1]!)) body.push(lines[end++]!);
    blocks.push({ lang: open[2]!, code: `${body.join("\n")}\n`, line: index + 1, before: prose.join("\n") });
    prose = [];
    index = end;
  }
  return blocks;
}

/** `markdown` without its fenced blocks and inline code spans, where links and headings are not. */
function prose(markdown: string): string {
  const lines = markdown.split("\n");
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const open = FENCE.exec(line);
    if (fence === null && open !== null) fence = open[1]!;
    else if (fence !== null && line.startsWith(fence)) fence = null;
    else if (fence === null) kept.push(line.replace(/`[^`\n]*`/g, "``"));
  }
  return kept.join("\n");
}

/** The targets of `markdown`'s inline links and images, in order. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

/** The anchors GitHub gives `markdown`'s headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split("\n");
  let fence: string | null = null;
  for (const line of lines) {
    const open = FENCE.exec(line);
    if (fence === null && open !== null) fence = open[1]!;
    else if (fence !== null && line.startsWith(fence)) fence = null;
    if (fence !== null || open !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
