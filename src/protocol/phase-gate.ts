/**
 * The one admission rule for every operation that needs a ready child
 * (sessions, history, turns, approvals): before startup has succeeded such a
 * request is `not_initialized`, and after a failed startup it is answered with
 * that startup's own code, so a client learns why the child will never serve
 * it (a failed startup requires a restart). `initialize`, `status` and
 * `shutdown` have rules of their own and are not gated here.
 *
 * @module
 */

import { ErrorCode as Codes, type StartupErrorCode } from "./errors.ts";
import type { Reject } from "./dispatcher.ts";

/** Where initialization stands, as far as the gate tells phases apart. */
export type GatedPhase =
  | { readonly kind: "new" | "starting" | "ready" }
  | { readonly kind: "failed"; readonly code: StartupErrorCode };

/**
 * Runs request `id`'s handler on a ready child's `T`: at once when `T` is
 * there, else once it has loaded, handlers in the order they were given
 * (the runner answers `id` itself if `T` cannot load).
 */
export type ReadyRunner<T> = (handle: (ready: T) => void, id: string) => void;

/** Admits requests to a ready child's `T` (its workers) and refuses them otherwise. */
export class PhaseGate<T> {
  readonly #phase: () => GatedPhase;
  readonly #ready: () => ReadyRunner<T> | null;
  readonly #reject: Reject;

  /**
   * Creates the gate over the current `phase` and the `ready` runner, which
   * exists from the moment startup has succeeded; `reject` answers refusals.
   */
  constructor(phase: () => GatedPhase, ready: () => ReadyRunner<T> | null, reject: Reject) {
    this.#phase = phase;
    this.#ready = ready;
    this.#reject = reject;
  }

  /** Wraps `handle` so that it runs only on a ready child; any other request gets the phase's code. */
  ready<P>(handle: (ready: T, id: string, params: P) => void): (id: string, params: P) => void {
    return (id, params) => {
      const phase = this.#phase();
      if (phase.kind === "failed") return this.#reject(id, phase.code);
      const run = this.#ready();
      if (run === null) return this.#reject(id, Codes.notInitialized);
      run((ready) => handle(ready, id, params), id);
    };
  }
}
