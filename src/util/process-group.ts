/**
 * Ending a subprocess that runs in its own process group, when its time is
 * up or its caller cancels: SIGTERM to the whole group, then SIGKILL
 * {@link KILL_GRACE_MS} later if it is still running (a `trap '' TERM`
 * cannot stop that), and {@link DRAIN_GRACE_MS} after that the caller stops
 * waiting for its pipes, should a process that left the group hold them
 * open. The shell tool (`runner/tools/shell.ts`) and hooks
 * (`hooks/hook-process.ts`) end their commands so.
 *
 * @module
 */

import type { Disposable, Runtime, Subprocess } from "../host/runtime.ts";

/**
 * From SIGTERM to SIGKILL. With {@link DRAIN_GRACE_MS} it takes at most half
 * the 2,000 ms closing deadline, so a shutdown during a command that ignores
 * SIGTERM still has the other half for the run's closing appends and its
 * terminal event, and exits 0.
 */
export const KILL_GRACE_MS = 500;
/** From SIGKILL to giving up on pipes held open by a process that left the group (see {@link KILL_GRACE_MS}). */
export const DRAIN_GRACE_MS = 500;

/** Why a group was ended: its time was up, or its caller's signal aborted. */
export type GroupEnding = "timeout" | "cancel";

/**
 * The deadline of one subprocess spawned with `processGroup`: from its
 * construction, the group is ended when `timeoutMs` pass or `signal`
 * aborts, whichever comes first. {@link dispose} it once the wait for the
 * subprocess is over, ended or not.
 */
export class GroupDeadline {
  #ending: GroupEnding | null = null;
  #killed = false;
  readonly #timers: Disposable[] = [];
  readonly #runtime: Pick<Runtime, "setTimer">;
  readonly #child: Subprocess;
  readonly #signal: AbortSignal;
  readonly #onAbort = () => this.#end("cancel");
  #giveUp: () => void = () => {};
  /** Resolves with null {@link DRAIN_GRACE_MS} after SIGKILL: stop waiting for the pipes then. Never resolves otherwise. */
  readonly gaveUp: Promise<null> = new Promise<null>((resolve) => (this.#giveUp = () => resolve(null)));

  /** Watches `child` for `timeoutMs` and `signal` (whose caller checked it had not aborted before spawning). */
  constructor(runtime: Pick<Runtime, "setTimer">, child: Subprocess, timeoutMs: number, signal: AbortSignal) {
    this.#runtime = runtime;
    this.#child = child;
    this.#signal = signal;
    signal.addEventListener("abort", this.#onAbort, { once: true });
    this.#timers.push(runtime.setTimer(timeoutMs, () => this.#end("timeout")));
  }

  /** Why the group was ended, or null while it was not. */
  get ending(): GroupEnding | null {
    return this.#ending;
  }

  /** Whether SIGKILL was sent (the group outlived SIGTERM's grace). */
  get killed(): boolean {
    return this.#killed;
  }

  /** Stops watching: no signal is sent after this, and the abort listener is gone. */
  dispose(): void {
    this.#signal.removeEventListener("abort", this.#onAbort);
    for (const timer of this.#timers) timer.dispose();
  }

  #end(why: GroupEnding): void {
    if (this.#ending !== null) return;
    this.#ending = why;
    this.#child.kill("SIGTERM");
    this.#timers.push(this.#runtime.setTimer(KILL_GRACE_MS, () => {
      this.#killed = true;
      this.#child.kill("SIGKILL");
      this.#timers.push(this.#runtime.setTimer(DRAIN_GRACE_MS, () => {
        this.#child.stdout?.close();
        this.#child.stderr?.close();
        this.#giveUp();
      }));
    }));
  }
}
