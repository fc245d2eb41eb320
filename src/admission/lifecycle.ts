/**
 * The initialization state machine of one child: `new` until an admitted
 * `initialize`, then `starting` while the single startup task runs, then
 * `ready` or `failed` for good. `status` reads it from memory only.
 *
 * @module
 */

import { ErrorCode, type StartupErrorCode } from "../protocol/errors.ts";
import type { OutputValue } from "../protocol/frames.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import type { StartupOutcome, StartupSnapshot } from "./startup.ts";

/** Where initialization stands. */
export type Phase =
  | { readonly kind: "new" }
  | { readonly kind: "starting"; readonly abort: AbortController }
  | { readonly kind: "ready"; readonly snapshot: StartupSnapshot }
  | { readonly kind: "failed"; readonly code: StartupErrorCode; readonly contextId: string | null };

/** The wire `status` object. */
export interface StatusObject {
  readonly [key: string]: OutputValue;
  readonly state: "starting" | "idle" | "running" | "failed";
  readonly readiness: string;
  readonly provider: string | null;
  readonly model: string | null;
  readonly context_id: string | null;
  readonly session_id: string | null;
  readonly run_id: string | null;
}

function safeName(name: string): string | null {
  return isSafeDisplayName(name) ? name : null;
}

/** Holds the phase and renders it as the wire status. */
export class Lifecycle {
  #phase: Phase = { kind: "new" };
  // Rendered once per phase: status is answered from memory on every request.
  #status: StatusObject | null = null;

  /** The current phase. */
  get phase(): Phase {
    return this.#phase;
  }

  /** Moves from `new` to `starting`; returns the startup task's abort controller. */
  begin(): AbortController {
    if (this.#phase.kind !== "new") throw new Error("Lifecycle.begin() called twice");
    const abort = new AbortController();
    this.#enter({ kind: "starting", abort });
    return abort;
  }

  /** Records the startup task's outcome, unless startup was already settled. */
  settle(outcome: StartupOutcome): void {
    if (this.#phase.kind !== "starting") return;
    this.#enter(
      outcome.ok
        ? { kind: "ready", snapshot: outcome.snapshot }
        : { kind: "failed", code: outcome.code, contextId: outcome.contextId },
    );
  }

  /** Cancels a pending startup; returns whether one was pending. */
  cancel(): boolean {
    if (this.#phase.kind !== "starting") return false;
    this.#phase.abort.abort();
    this.#enter({ kind: "failed", code: ErrorCode.startupCancelled, contextId: null });
    return true;
  }

  #enter(phase: Phase): void {
    this.#phase = phase;
    this.#status = null;
  }

  /** The status object; callers check for `new` first (`not_initialized`). */
  status(): StatusObject {
    this.#status ??= this.#render();
    return this.#status;
  }

  #render(): StatusObject {
    const phase = this.#phase;
    switch (phase.kind) {
      case "new":
      case "starting":
        return {
          state: "starting",
          readiness: "initializing",
          provider: null,
          model: null,
          context_id: null,
          session_id: null,
          run_id: null,
        };
      case "ready":
        return {
          state: "idle",
          readiness: "ready",
          provider: safeName(phase.snapshot.selection.provider),
          model: safeName(phase.snapshot.selection.model),
          context_id: phase.snapshot.contextId,
          session_id: null,
          run_id: null,
        };
      case "failed":
        return {
          state: "failed",
          readiness: phase.code,
          provider: null,
          model: null,
          context_id: phase.contextId,
          session_id: null,
          run_id: null,
        };
    }
  }
}
