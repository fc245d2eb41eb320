/**
 * The initialization state machine of one child: `new` until an admitted
 * `initialize`, then `starting` while the single startup task runs, then
 * `ready` or `failed` for good; a ready child that cannot load the code
 * behind its promises (a damaged installation) fails after all, as a
 * startup does (docs/protocol.md, `initialize`). Every phase is a fresh object, so a reader
 * may cache what it derives from one (`status` does).
 *
 * @module
 */

import { ErrorCode, type StartupErrorCode } from "../protocol/errors.ts";
import type { StartupOutcome, StartupSnapshot } from "./startup.ts";

/** Where initialization stands. */
export type Phase =
  | { readonly kind: "new" }
  | { readonly kind: "starting"; readonly abort: AbortController }
  | { readonly kind: "ready"; readonly snapshot: StartupSnapshot }
  | { readonly kind: "failed"; readonly code: StartupErrorCode; readonly contextId: string | null };

/** Holds the phase; moves only forward, and only along the documented edges. */
export class Lifecycle {
  #phase: Phase = { kind: "new" };

  get phase(): Phase {
    return this.#phase;
  }

  /** Moves from `new` to `starting`; returns the startup task's abort controller. */
  begin(): AbortController {
    if (this.#phase.kind !== "new") throw new Error("Lifecycle.begin() called twice");
    const abort = new AbortController();
    this.#phase = { kind: "starting", abort };
    return abort;
  }

  /** Records the startup task's outcome, unless startup was already settled. */
  settle(outcome: StartupOutcome): void {
    if (this.#phase.kind !== "starting") return;
    this.#phase = outcome.ok
      ? { kind: "ready", snapshot: outcome.snapshot }
      : { kind: "failed", code: outcome.code, contextId: outcome.contextId };
  }

  /**
   * Moves a ready child to `failed` with `code` (it keeps its context id):
   * what startup promised cannot be served, so `status` and every later
   * request say so, as after a failed startup.
   */
  fail(code: StartupErrorCode): void {
    if (this.#phase.kind !== "ready") return;
    this.#phase = { kind: "failed", code, contextId: this.#phase.snapshot.contextId };
  }

  /** Cancels a pending startup; returns whether one was pending. */
  cancel(): boolean {
    if (this.#phase.kind !== "starting") return false;
    this.#phase.abort.abort();
    this.#phase = { kind: "failed", code: ErrorCode.startupCancelled, contextId: null };
    return true;
  }
}
