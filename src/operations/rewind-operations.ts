/**
 * The negotiated `session.rewind.preview` and `session.rewind` on the
 * session worker (serialised with every other session operation, `busy`
 * while a turn runs). Their code (`src/rewind/`) loads on the first call,
 * so a child whose client never rewinds loads none of it.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { MethodParams } from "../protocol/methods.ts";
import type { SessionWorker } from "./sessions/session-worker.ts";

/** The rewind handlers of a ready child. */
export class RewindOperations {
  readonly #runtime: Runtime;
  readonly #sessions: SessionWorker;

  /** Creates the handlers; `sessions` runs them. */
  constructor(runtime: Runtime, sessions: SessionWorker) {
    this.#runtime = runtime;
    this.#sessions = sessions;
  }

  /** `session.rewind.preview`. */
  preview(id: string, params: MethodParams<"session.rewind.preview">): void {
    this.#sessions.run(id, async (store, signal) => (await import("../rewind/session-rewind.ts")).previewRewind({ runtime: this.#runtime, store }, params, signal));
  }

  /** `session.rewind`. */
  apply(id: string, params: MethodParams<"session.rewind">): void {
    this.#sessions.run(id, async (store, signal, commit) => (await import("../rewind/session-rewind.ts")).applyRewind({ runtime: this.#runtime, store }, params, signal, commit));
  }
}
