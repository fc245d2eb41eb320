/**
 * The negotiated `session.rewind.preview` and `session.rewind` on the
 * session worker (serialised with every other session operation, `busy`
 * while a turn runs), and the file checkpoints of a child whose client
 * negotiated them. Their code (`src/rewind/`) loads on first use, so a
 * child whose client never rewinds loads none of it.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { MethodParams } from "../protocol/methods.ts";
import type { Checkpoints } from "../rewind/checkpoints.ts";
import type { TakeCheckpoint } from "../runner/tools/tool.ts";
import type { SessionWorker } from "./sessions/session-worker.ts";

/** The rewind handlers and checkpoints of a ready child. */
export class RewindOperations {
  readonly #runtime: Runtime;
  readonly #sessions: () => SessionWorker;
  readonly #home: string;
  readonly #workspace: string;
  #checkpoints: Promise<Checkpoints> | null = null;

  /** Creates the handlers; `sessions()` runs them; checkpoints live in `home` for files of `workspace`. */
  constructor(runtime: Runtime, sessions: () => SessionWorker, home: string, workspace: string) {
    this.#runtime = runtime;
    this.#sessions = sessions;
    this.#home = home;
    this.#workspace = workspace;
  }

  #store(): Promise<Checkpoints> {
    return this.#checkpoints ??= import("../rewind/checkpoints.ts").then(({ Checkpoints }) => new Checkpoints(this.#runtime, this.#home, this.#workspace));
  }

  /** The checkpoint taker of one turn, for the run's tools (`RunConfig.checkpoints`). */
  taker(sessionId: string, turnId: string): TakeCheckpoint {
    return async (path, before, after) => (await this.#store()).taker(sessionId, turnId)(path, before, after);
  }

  /** `session.rewind.preview`. */
  preview(id: string, params: MethodParams<"session.rewind.preview">): void {
    this.#sessions().run(id, async (store, signal) => {
      const [{ previewRewind }, checkpoints] = await Promise.all([import("../rewind/session-rewind.ts"), this.#store()]);
      return previewRewind({ runtime: this.#runtime, store, checkpoints }, params, signal);
    });
  }

  /** `session.rewind`. */
  apply(id: string, params: MethodParams<"session.rewind">): void {
    this.#sessions().run(id, async (store, signal, commit) => {
      const [{ applyRewind }, checkpoints] = await Promise.all([import("../rewind/session-rewind.ts"), this.#store()]);
      return applyRewind({ runtime: this.#runtime, store, checkpoints }, params, signal, commit);
    });
  }
}
