/**
 * The one place that renders `status`: the lifecycle phase (starting, ready
 * with the effective provider, model and context, or failed with its startup
 * code), merged with the attached session and the active run once the
 * workers hold them. It reads memory only: `status` never touches the
 * filesystem or a provider, so it answers at once even during startup.
 *
 * @module
 */

import type { Phase } from "../admission/lifecycle.ts";
import { ErrorCode as Codes } from "../protocol/errors.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import type { StatusResult } from "../protocol/results.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import type { SelectionState } from "./catalog/selection-state.ts";

/** What `status` reads of a ready child: its selection, and what its workers hold once they are loaded. */
export interface ReadyView {
  /** The current selection; it reflects the last completed attachment or mutation. */
  readonly selection: SelectionState;
  /** The session of the last completed attachment, so it always names the session the selection belongs to. */
  readonly sessionId: string | null;
  /** The active run. */
  readonly runId: string | null;
}

/** The wire `status` object, inferred from its schema in `src/protocol/results.ts`. */
export type StatusObject = StatusResult;

/** A provider or model name as `status` may show it: secret-like, redacted or control-bearing names become `null`. */
function safeName(name: string): string | null {
  return isSafeDisplayName(name) ? name : null;
}

function renderPhase(phase: Phase): StatusObject {
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
        selection: null,
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
        selection: null,
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
        selection: null,
      };
  }
}

/** Renders and answers `status` from the lifecycle phase and the ready child. */
export class StatusView {
  readonly #phase: () => Phase;
  readonly #ready: () => ReadyView | null;
  readonly #replies: WorkerReplies;
  // Rendered once per phase (phases are immutable objects): status is answered from memory on every request.
  #rendered: { readonly phase: Phase; readonly status: StatusObject } | null = null;

  /** Creates the view over the current `phase` and `ready` child (null until startup succeeded). */
  constructor(phase: () => Phase, ready: () => ReadyView | null, replies: WorkerReplies) {
    this.#phase = phase;
    this.#ready = ready;
    this.#replies = replies;
  }

  /** Handles `status` request `id`: it needs an admitted `initialize`, whatever became of it. */
  answer(id: string): void {
    if (this.#phase().kind === "new") return this.#replies.error(id, Codes.notInitialized);
    this.#replies.result(id, this.render());
  }

  /** The current status object. */
  render(): StatusObject {
    const phase = this.#phase();
    if (this.#rendered?.phase !== phase) this.#rendered = { phase, status: renderPhase(phase) };
    const status = this.#rendered.status;
    const ready = this.#ready();
    if (ready === null || phase.kind !== "ready") return status;
    const runId = ready.runId;
    const running = runId === null ? {} : { state: "running", run_id: runId } as const;
    // The effective provider and model follow the selection.
    const { provider, model } = ready.selection.value;
    return { ...status, provider: safeName(provider), model: safeName(model), session_id: ready.sessionId, ...running, selection: ready.selection.render() };
  }
}
