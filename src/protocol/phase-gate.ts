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

/** Admits requests to a ready child's `T` (its workers) and refuses them otherwise. */
export class PhaseGate<T> {
  readonly #phase: () => GatedPhase;
  readonly #ready: () => T | null;
  readonly #reject: Reject;

  /**
   * Creates the gate over the current `phase` and the `ready` value, which
   * exists from the moment startup has succeeded; `reject` answers refusals.
   */
  constructor(phase: () => GatedPhase, ready: () => T | null, reject: Reject) {
    this.#phase = phase;
    this.#ready = ready;
    this.#reject = reject;
  }

  /** Wraps `handle` so that it runs only on a ready child; any other request gets the phase's code. */
  ready<P>(handle: (ready: T, id: string, params: P) => void): (id: string, params: P) => void {
    return (id, params) => {
      const phase = this.#phase();
      if (phase.kind === "failed") return this.#reject(id, phase.code);
      const ready = this.#ready();
      if (ready === null) return this.#reject(id, Codes.notInitialized);
      handle(ready, id, params);
    };
  }
}
