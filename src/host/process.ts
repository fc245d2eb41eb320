/**
 * Subprocesses in the runtime contract: what the shell tool needs to start a
 * command in its own process group, stream its output and kill it.
 *
 * @module
 */

import type { ByteReader, ByteWriter } from "./streams.ts";

/** How a subprocess's stdio is wired. */
export type StdioMode = "pipe" | "null" | "inherit-stderr";

/** Options for {@link Runtime.spawn}. */
export interface SpawnOptions {
  /** Arguments after the command. */
  readonly args: readonly string[];
  /** Working directory (absolute). */
  readonly cwd: string;
  /** The complete environment of the child. */
  readonly env: Readonly<Record<string, string>>;
  /** Whether the child gets piped stdin/stdout/stderr or none. */
  readonly stdio: { stdin: "pipe" | "null"; stdout: "pipe" | "null"; stderr: "pipe" | "null" };
  /** Starts the child in its own process group so the whole group can be signalled. */
  readonly processGroup: boolean;
}

/** How a subprocess ended. */
export interface ExitStatus {
  /** Exit code, or `null` when killed by a signal. */
  readonly code: number | null;
  /** Terminating signal name, or `null`. */
  readonly signal: string | null;
}

/** A running subprocess. */
export interface Subprocess {
  readonly pid: number;
  /** Its stdin, when piped; `close()` sends EOF. */
  readonly stdin: (ByteWriter & { close(): Promise<void> }) | null;
  /** Its stdout, when piped. */
  readonly stdout: ByteReader | null;
  /** Its stderr, when piped. */
  readonly stderr: ByteReader | null;
  /** Sends `signal` to the child, or to its group when spawned with `processGroup`. */
  kill(signal: "SIGTERM" | "SIGKILL" | "SIGINT"): void;
  /** Resolves when the child has exited. */
  readonly exited: Promise<ExitStatus>;
}
