/**
 * The facts a tool call hands its card (`docs/features/local-agent-tool-cards.md`):
 * what the prepared call resolved (the canonical path, the bytes before and
 * after a write, the command) and how it ended (a read's counts, a write's
 * effect, a command's exit and bounded output). Tools attach them to their
 * prepared calls and results as plain references, which cost nothing when no
 * client wants cards; only the card builder (loaded for a negotiating
 * client) turns them into a bounded card.
 *
 * @module
 */

import type { McpResultKind } from "../protocol/tool-cards.ts";

/** What a prepared call resolved. */
export type CallFacts =
  | {
    /** `read_file`. */
    readonly kind: "read";
    /** Canonical workspace-relative path, escaped as the approval prompt shows it. */
    readonly path: string;
  }
  | {
    /** `write_file`. */
    readonly kind: "write";
    /** See the `read` facts. */
    readonly path: string;
    /** The canonical absolute path, read once more for the diff; never shown. */
    readonly target: string;
    /** Whether the file does not exist yet. */
    readonly created: boolean;
    /** The existing file's size (0 when created). */
    readonly bytesBefore: number;
    /** The existing file's hard links: with more than one it is not read for the diff. */
    readonly links: number;
    /** The bytes the call writes. */
    readonly after: Uint8Array;
  }
  | {
    /** `edit_file`. */
    readonly kind: "edit";
    /** See the `read` facts. */
    readonly path: string;
    /** The file's text as prepared. */
    readonly before: string;
    /** The text the call writes. */
    readonly after: string;
    /** Size of the file as prepared. */
    readonly bytesBefore: number;
    /** Size the call writes. */
    readonly bytesAfter: number;
    /** Occurrences replaced. */
    readonly replacements: number;
  }
  | {
    /** `shell`. */
    readonly kind: "shell";
    /** The exact command. */
    readonly command: string;
    /** Its timeout in seconds. */
    readonly timeoutS: number;
    /** Its output so far (redacted, head and tail), or null before it started: for live updates. */
    readonly outputSoFar: () => OutputFacts | null;
  }
  | {
    /** A tool of an MCP server. */
    readonly kind: "mcp";
    /** The server's settings name. */
    readonly server: string;
    /** The server's own name of the tool. */
    readonly tool: string;
    /** The arguments as they are sent. */
    readonly arguments: Readonly<Record<string, unknown>>;
  };

/** A command's output as the shell kept it: head and tail, the middle counted. */
export interface OutputFacts {
  /** Redacted text from the start. */
  readonly head: string;
  /** Redacted text from the end, after the omitted middle ("" when nothing was omitted). */
  readonly tail: string;
  /** Every byte the command wrote. */
  readonly totalBytes: number;
  /** Bytes in neither head nor tail. */
  readonly omittedBytes: number;
}

/** How a call ended, beyond `ok`. */
export type ResultFacts =
  | {
    /** `read_file` that read. */
    readonly kind: "read";
    /** Lines shown to the model. */
    readonly lines: number;
    /** Bytes shown to the model. */
    readonly bytes: number;
    /** Whether an output or scan limit cut the read. */
    readonly truncated: boolean;
  }
  | {
    /** `shell`. */
    readonly kind: "shell";
    /** How the command ended. */
    readonly ending: "exit" | "signal" | "timeout" | "cancelled" | "abandoned" | "not_started";
    /** Its exit status, or null. */
    readonly exitCode: number | null;
    /** The signal that ended it, or null. */
    readonly signal: string | null;
    /** From spawn to the end of the wait, or null when it never started. */
    readonly durationMs: number | null;
    /** Its output, or null when it never started. */
    readonly output: OutputFacts | null;
  }
  | {
    /** A tool of an MCP server. */
    readonly kind: "mcp";
    /** What its result held, or `none` when none came back. */
    readonly result: McpResultKind;
    /** Whether the call was sent and its answer never came (it timed out): what the tool did cannot be known. */
    readonly unanswered: boolean;
  };
