/**
 * Why a connection ended when the child's output ended or its input broke
 * without a protocol violation: the host's account of the child (a spawn
 * failure, an exit code) turns "the child closed its output" into an error
 * that names the cause, and a child that exited before `initialize`
 * answered into a {@link SpawnError} with the tail of its stderr. So does
 * output that is not the protocol before `initialize` answered, when the
 * child exits within the wait: a wrong `command` (one that prints its
 * usage, say) is a spawn failure, not a server breaking the protocol.
 *
 * @module
 */

import { ConnectionClosed, ProtocolViolation, SpawnError } from "./errors.ts";

/** What the client knows when its connection ended. */
export interface Ending {
  /** What the connection saw (EOF, a broken pipe). */
  readonly message: string;
  /** What was wrong with the child's output before `initialize` answered, if that ended it; reading stopped, its stdin is still open. */
  readonly violation?: string | undefined;
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

/**
 * Resolves with the error the end is reported with: a violation whose child
 * did not exit within the wait stays a {@link ProtocolViolation}, with the
 * tail of its stderr.
 */
export async function explainEnding(ending: Ending): Promise<ConnectionClosed | ProtocolViolation> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ending.waitMs)));
  const exit = await Promise.race([ending.exited.then((code) => ({ code }), (error: unknown) => ({ error })), bound]);
  clearTimeout(timer);
  if (exit !== null && "error" in exit && exit.error instanceof ConnectionClosed) return exit.error;
  const violation = ending.violation;
  if (exit === null || "error" in exit || ending.expected) {
    return violation === undefined ? new ConnectionClosed(ending.message) : new ProtocolViolation(violation, ending.stderrTail());
  }
  const how = exit.code === null ? "on a signal" : `with code ${exit.code}`;
  if (ending.initialized) return new ConnectionClosed(`${ending.message}: it exited ${how}`);
  const tail = ending.stderrTail();
  const said = tail === "" ? "" : `; its stderr ended with:\n${tail}`;
  const wrote = violation === undefined ? "" : ` wrote something that is not a protocol frame (${violation}) and`;
  return new SpawnError("exited", `the child${wrote} exited ${how} before initialize answered${said}`, { exitCode: exit.code, stderr: tail });
}
