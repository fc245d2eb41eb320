/**
 * A unified diff (`diff -u`: three lines of context, `@@ -a,b +c,d @@`
 * hunks, `\ No newline at end of file`) of a file's text before and after a
 * write, for a card (`docs/features/local-agent-tool-cards.md`). Lines are
 * compared with their line breaks, so a changed ending shows.
 *
 * Cost is bounded, not minimal: common leading and trailing lines are
 * matched first (an edit touches a few lines of a long file), and the
 * middle is aligned by a longest-common-subsequence table only while it
 * has at most {@link MAX_TABLE_CELLS} cells; a larger middle is shown as
 * removed and added whole, which is still a correct diff.
 *
 * @module
 */

/** The largest middle (lines before × lines after) aligned line by line. */
export const MAX_TABLE_CELLS = 1_000_000;

const CONTEXT = 3;

type Op = { readonly sign: " " | "-" | "+"; readonly line: string };

/** `text` as lines, each with its line break (the last may have none). */
function linesOf(text: string): string[] {
  const lines = text.split("\n").map((line) => `${line}\n`);
  const last = lines.pop()!;
  if (last !== "\n") lines.push(last.slice(0, -1));
  return lines;
}

/** The edit script of the middles `a` and `b`: aligned by LCS when small enough, else replaced whole. */
function middleOps(a: readonly string[], b: readonly string[]): Op[] {
  if (a.length * b.length > MAX_TABLE_CELLS) {
    return [...a.map((line) => ({ sign: "-" as const, line })), ...b.map((line) => ({ sign: "+" as const, line }))];
  }
  const width = b.length + 1;
  // table[i * width + j]: the LCS length of a[i..] and b[j..].
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ sign: " ", line: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || table[(i + 1) * width + j]! >= table[i * width + j + 1]!)) {
      // Removals before additions where both keep the alignment, as diff -u writes them.
      ops.push({ sign: "-", line: a[i++]! });
    } else ops.push({ sign: "+", line: b[j++]! });
  }
  return ops;
}

/** The whole edit script from `before` to `after`. */
function editScript(before: readonly string[], after: readonly string[]): Op[] {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < before.length - prefix && suffix < after.length - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  const same = (line: string): Op => ({ sign: " ", line });
  return [
    ...before.slice(0, prefix).map(same),
    ...middleOps(before.slice(prefix, before.length - suffix), after.slice(prefix, after.length - suffix)),
    ...before.slice(before.length - suffix).map(same),
  ];
}

/** `start,count` of a hunk header; an empty range names the line before it, as `diff -u` does. */
function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
}

/** One line of a hunk, with the no-newline marker when it has no line break. */
function hunkLine(op: Op): string {
  return op.line.endsWith("\n") ? `${op.sign}${op.line}` : `${op.sign}${op.line}\n\\ No newline at end of file\n`;
}

/**
 * The unified diff from `before` (null: the file is created) to `after`,
 * labelled `a/<path>` and `b/<path>`; "" when nothing changes.
 */
export function unifiedDiff(path: string, before: string | null, after: string): string {
  const ops = editScript(before === null ? [] : linesOf(before), linesOf(after));
  const changed = ops.flatMap((op, index) => (op.sign === " " ? [] : [index]));
  if (changed.length === 0) return "";
  let out = `--- ${before === null ? "/dev/null" : `a/${path}`}\n+++ b/${path}\n`;
  // Line numbers before each op, on both sides.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const op of ops) {
    oldAt.push(oldLine);
    newAt.push(newLine);
    if (op.sign !== "+") oldLine++;
    if (op.sign !== "-") newLine++;
  }
  let index = 0;
  while (index < changed.length) {
    const start = Math.max(0, changed[index]! - CONTEXT);
    let last = changed[index]!;
    // Changes closer than twice the context share a hunk.
    while (index + 1 < changed.length && changed[index + 1]! - last <= 2 * CONTEXT) last = changed[++index]!;
    index++;
    const end = Math.min(ops.length, last + CONTEXT + 1);
    const slice = ops.slice(start, end);
    const oldCount = slice.filter((op) => op.sign !== "+").length;
    const newCount = slice.filter((op) => op.sign !== "-").length;
    out += `@@ -${range(oldAt[start]!, oldCount)} +${range(newAt[start]!, newCount)} @@\n${slice.map(hunkLine).join("")}`;
  }
  return out;
}
