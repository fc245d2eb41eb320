/**
 * Why a connection ended when the child's output ended or its input broke
 * without a protocol violation: the host's account of the child (a spawn
 * failure, an exit code) turns "the child closed its output" into an error
 * that names the cause, and a child that exited before `initialize`
 * answered into a {@link SpawnError} with the tail of its stderr.
 *
 * @module
 */

import { ConnectionClosed, SpawnError } from "./errors.ts";

/** What the client knows when its connection ended. */
export interface Ending {
  /** What the connection saw (EOF, a broken pipe). */
  readonly message: string;
  /** The host's exit promise (see `AgentClientOptions.exited`). */
  readonly exited: Promise<number | null>;
  /** Whether `initialize` had answered with success. */
  readonly initialized: boolean;
  /** Whether the caller asked for the end (close(), shutdown()): then only a spawn failure is worth reporting. */
  readonly expected: boolean;
  /** The tail of the child's stderr, "" when the host keeps none. */
  readonly stderrTail: () => string;
  /** How long to wait for the exit: a child that closed its output and lives on is not waited for longer. */
  readonly waitMs: number;
}

/** Resolves with the error the end is reported with. */
export async function explainEnding(ending: Ending): Promise<ConnectionClosed> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ending.waitMs)));
  const exit = await Promise.race([ending.exited.then((code) => ({ code }), (error: unknown) => ({ error })), bound]);
  clearTimeout(timer);
  if (exit === null) return new ConnectionClosed(ending.message);
  if ("error" in exit) return exit.error instanceof ConnectionClosed ? exit.error : new ConnectionClosed(ending.message);
  if (ending.expected) return new ConnectionClosed(ending.message);
  const how = exit.code === null ? "on a signal" : `with code ${exit.code}`;
  if (ending.initialized) return new ConnectionClosed(`${ending.message}: it exited ${how}`);
  const tail = ending.stderrTail();
  const said = tail === "" ? "" : `; its stderr ended with:\n${tail}`;
  return new SpawnError("exited", `the child exited ${how} before initialize answered${said}`, { exitCode: exit.code, stderr: tail });
}
