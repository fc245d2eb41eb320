/**
 * Builds the cards of schema 1 (`docs/features/local-agent-tool-cards.md`)
 * from a call's facts: the kind, the prepared part (path, write sizes, the
 * diff, the command), the finished part (a read's counts, a command's
 * ending and output), the terminal outcome and effect, and the fit to
 * `card_bytes`. Pure apart from the one read of a file `write_file` is
 * about to replace.
 *
 * @module
 */

import type { FileSystem } from "../host/fs.ts";
import type { ApprovalOutcome } from "../protocol/approval-outcomes.ts";
import { CARD_LIMITS, type Card, type CardDiff, type CardKind, type CardOutcome, type CardOutput, type CardShell } from "../protocol/tool-cards.ts";
import { cutWithMarker, type DetailBudget, displayText, escapedBytes, headWithin, tailWithin } from "./bounds.ts";
import { unifiedDiff } from "./diff.ts";
import { finishedMcp, preparedMcp } from "./mcp.ts";
import type { CallFacts, OutputFacts, ResultFacts } from "./facts.ts";
import { escapeInvisible } from "../util/invisible.ts";
import { redactSecrets } from "../util/redaction.ts";

const KIND_OF_TOOL: Readonly<Record<string, CardKind>> = { read_file: "read", write_file: "write", edit_file: "edit", shell: "shell" };

/** The card kind of a call of `tool` (a built-in's name; anything else is `other`). */
export function cardKind(tool: string, facts: CallFacts | undefined): CardKind {
  if (facts !== undefined) return facts.kind === "mcp" ? "other" : facts.kind;
  return Object.hasOwn(KIND_OF_TOOL, tool) ? KIND_OF_TOOL[tool]! : "other";
}

/** A card before anything is known of the call but its tool. */
export function emptyCard(tool: string, kind: CardKind): Card {
  return {
    tool,
    kind,
    phase: "running",
    decision: null,
    forced: false,
    outcome: null,
    effect: null,
    summary: "",
    path: null,
    write: null,
    diff: null,
    read: null,
    shell: null,
    mcp: null,
    detail_omitted: false,
  };
}

const DIFF_MARKER_START = "\n[… diff truncated: ";
const diffMarker = (shown: number, total: number) => `${DIFF_MARKER_START}${shown} of ${total} bytes shown …]`;

/**
 * A diff made safe to show line by line: each hunk line's text is redacted
 * apart from its sign, because a sign (`-`, `+`) in front of a credential
 * would hide it from the token-boundary rules of redaction.
 */
function displayDiff(diff: string, secrets: readonly string[]): string {
  return diff.split("\n").map((line, index) => {
    const body = index >= 2 && (line.startsWith(" ") || line.startsWith("-") || line.startsWith("+"));
    return body ? line[0] + displayText(line.slice(1), secrets) : displayText(line, secrets);
  }).join("\n");
}

/** The bounded diff of `before` (null: created) to `after`, or null when it is empty. */
export function boundedDiff(path: string, before: string | null, after: string, secrets: readonly string[]): CardDiff | null {
  const whole = displayDiff(unifiedDiff(path, before, after), secrets);
  if (whole === "") return null;
  const { text, cut } = cutWithMarker(whole, CARD_LIMITS.diff_bytes, diffMarker);
  return { text, truncated: cut, total_bytes: new TextEncoder().encode(whole).length };
}

/** The text of the file `write_file` replaces, or null when it is not shown (hard-linked, not UTF-8, unreadable). */
async function previousText(fs: FileSystem, facts: Extract<CallFacts, { kind: "write" }>): Promise<string | null> {
  if (facts.links > 1) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(await fs.readFile(facts.target, Math.max(facts.bytesBefore, 1)));
  } catch {
    return null;
  }
}

/** The card's prepared part: path, write sizes, the diff (charged to `budget`), the command. */
export async function preparedCard(card: Card, facts: CallFacts | undefined, fs: FileSystem, secrets: readonly string[], budget: DetailBudget): Promise<Card> {
  if (facts === undefined) return card;
  if (facts.kind === "mcp") return { ...card, mcp: preparedMcp(facts, secrets) };
  if (facts.kind === "shell") {
    const shell: CardShell = {
      command: displayText(facts.command, secrets),
      cwd: ".",
      timeout_s: facts.timeoutS,
      exit_code: null,
      signal: null,
      ending: null,
      duration_ms: null,
      output: null,
    };
    return { ...card, shell };
  }
  // Shown like every card text: a path can hold a known secret as well as invisible characters.
  const path = escapeInvisible(redactSecrets(facts.path, secrets));
  if (facts.kind === "read") return { ...card, path };
  const decoded = facts.kind === "edit" ? facts.after : new TextDecoder().decode(facts.after);
  const before = facts.kind === "edit" ? facts.before : facts.created ? null : await previousText(fs, facts);
  const write = facts.kind === "edit"
    ? { mode: "edit" as const, bytes_before: facts.bytesBefore, bytes_after: facts.bytesAfter, replacements: facts.replacements }
    : { mode: facts.created ? "create" as const : "overwrite" as const, bytes_before: facts.bytesBefore, bytes_after: facts.after.length, replacements: null };
  // A file that is not text (or not shown) has no text diff; bytes the call writes that are not UTF-8 neither.
  const textual = (facts.kind === "edit" || facts.created || before !== null) && !decoded.includes("\uFFFD");
  const diff = textual ? boundedDiff(path, before, decoded, secrets) : null;
  if (diff === null || budget.take(escapedBytes(diff.text))) return { ...card, path, write, diff };
  return { ...card, path, write, detail_omitted: true };
}

const outputOf = (facts: OutputFacts, secrets: readonly string[]): CardOutput => {
  const head = headWithin(displayText(facts.head, secrets), CARD_LIMITS.output_head_bytes);
  const tail = tailWithin(displayText(facts.tail, secrets), CARD_LIMITS.output_tail_bytes);
  // What the shell kept beyond these ends is counted with what it never kept.
  const shown = new TextEncoder().encode(head + tail).length;
  return { head, tail, total_bytes: facts.totalBytes, omitted_bytes: Math.max(facts.omittedBytes, facts.totalBytes - shown) };
};

/** `text` up to and with its last line break ("" without one). */
const completeLines = (text: string) => text.slice(0, text.lastIndexOf("\n") + 1);

/**
 * A running command's card with its output so far (bounded like the final
 * one, not charged to the run's budget: the terminal snapshot replaces it).
 * The output's end is still being written, and a credential cut short by a
 * pipe read is too short for redaction to know: it shows up to its last
 * line break, the rest counted as omitted until a later snapshot.
 */
export function runningCard(card: Card, output: OutputFacts, secrets: readonly string[]): Card {
  if (card.shell === null) return card;
  const sofar = output.tail === "" ? { ...output, head: completeLines(output.head) } : { ...output, tail: completeLines(output.tail) };
  return { ...card, shell: { ...card.shell, output: outputOf(sofar, secrets) } };
}

/** The card's finished part from the result's facts (a read's counts; a command's ending and output, charged to `budget`). */
export function finishedCard(card: Card, facts: ResultFacts | undefined, secrets: readonly string[], budget: DetailBudget): Card {
  if (facts?.kind === "read") return { ...card, read: { lines: facts.lines, bytes: facts.bytes, truncated: facts.truncated } };
  if (facts?.kind === "mcp") return card.mcp == null ? card : { ...card, mcp: finishedMcp(card.mcp, facts.result) };
  if (facts?.kind !== "shell" || card.shell === null) return card;
  const shell = { ...card.shell, exit_code: facts.exitCode, signal: facts.signal, ending: facts.ending, duration_ms: facts.durationMs };
  if (facts.output === null) return { ...card, shell };
  const output = outputOf(facts.output, secrets);
  if (budget.take(escapedBytes(output.head) + escapedBytes(output.tail))) return { ...card, shell: { ...shell, output } };
  return { ...card, shell, detail_omitted: true };
}

/** What the terminal snapshot says happened, from what the card saw. */
export interface Ending {
  /** The approval decision, or null when the call never reached one. */
  readonly decision: ApprovalOutcome | null;
  /** Settings or the profile denied it. */
  readonly deniedByPolicy: boolean;
  /** Whether it ran, and then whether it succeeded. */
  readonly ran: boolean;
  readonly ok: boolean;
  /** Whether the run was cancelled by the end of the call. */
  readonly cancelled: boolean;
  /** Whether the call was sent to a tool outside magi-code and its answer never came. */
  readonly unanswered: boolean;
}

/** The terminal outcome of a call. */
export function outcomeOf(card: Card, ending: Ending): CardOutcome {
  if (ending.deniedByPolicy || ending.decision === "denied" || ending.decision === "expired") return "denied";
  // Superseded: the Code Mode program that made the call ended while it waited, which cancels it.
  if (ending.decision === "cancelled" || ending.decision === "superseded") return "cancelled";
  if (!ending.ran) return ending.cancelled ? "cancelled" : "failed";
  if (ending.unanswered) return "unknown";
  const shell = card.shell?.ending;
  if (shell === "abandoned") return "unknown";
  if (shell === "cancelled" || (ending.cancelled && !ending.ok)) return "cancelled";
  return ending.ok ? "completed" : "failed";
}

/** What a finished call changed: a write either replaced the whole file or nothing (atomic); a run command or outside tool, unknown. */
export function effectOf(card: Card, ending: Ending): "none" | "applied" | "unknown" {
  if (!ending.ran) return "none";
  if (card.kind === "write" || card.kind === "edit") return ending.ok ? "applied" : "none";
  if (card.kind === "shell") return card.shell?.ending === "not_started" ? "none" : "unknown";
  return card.kind === "other" && card.tool !== "skill" && !BUILTIN_READERS.has(card.tool) ? "unknown" : "none";
}

const BUILTIN_READERS: ReadonlySet<string> = new Set(["list_directory", "glob", "grep"]);

const serializedBytes = (card: Card) => new TextEncoder().encode(JSON.stringify(card)).length;

/** `text` shortened by at least `over` escaped bytes, ending in `…`. */
const shorter = (text: string, over: number) => `${headWithin(text, Math.max(0, escapedBytes(text) - over - 3))}…`;

/** One step toward the bound: the largest cuttable text first in the order diff, output, command, path. */
function shrink(card: Card, over: number): Card {
  if (card.diff !== null && escapedBytes(card.diff.text) > 256) {
    // A diff cut before is cut again from its shown head, under one marker naming the whole diff.
    const shown = card.diff.truncated ? card.diff.text.slice(0, card.diff.text.lastIndexOf(DIFF_MARKER_START)) : card.diff.text;
    const text = cutWithMarker(shown, Math.max(0, escapedBytes(card.diff.text) - over), diffMarker, card.diff.total_bytes).text;
    return { ...card, diff: { ...card.diff, text, truncated: true } };
  }
  const shell = card.shell;
  const output = shell?.output ?? null;
  if (shell !== null && output !== null && output.head.length + output.tail.length > 0) {
    const [head, tail] = output.tail.length > 0 ? [output.head, tailWithin(output.tail, escapedBytes(output.tail) - over)] : [headWithin(output.head, escapedBytes(output.head) - over), ""];
    const omitted = output.total_bytes - new TextEncoder().encode(head + tail).length;
    return { ...card, shell: { ...shell, output: { ...output, head, tail, omitted_bytes: Math.max(output.omitted_bytes, omitted) } } };
  }
  if (shell !== null && escapedBytes(shell.command) > 256) return { ...card, shell: { ...shell, command: shorter(shell.command, over) } };
  return card.path === null || escapedBytes(card.path) <= 64 ? card : { ...card, path: shorter(card.path, over) };
}

/**
 * `card` within `card_bytes` serialized: the diff text, then the output,
 * then the command, then the path are cut, each with its marker; no other
 * field ever is (they are bounded by construction).
 */
export function fitCard(card: Card): Card {
  let fitted = card;
  for (let over = serializedBytes(fitted) - CARD_LIMITS.card_bytes; over > 0; over = serializedBytes(fitted) - CARD_LIMITS.card_bytes) {
    const next = shrink(fitted, over);
    if (next === fitted) break;
    fitted = next;
  }
  return fitted;
}
