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
  readonly #secrets: readonly string[];
  readonly #rewound: (sessionId: string) => void;
  #checkpoints: Promise<Checkpoints> | null = null;

  /**
   * Creates the handlers; `sessions()` runs them; checkpoints live in `home`
   * for files of `workspace`; `secrets` (the child's one growing list) are
   * redacted from previews; `rewound` hears of each applied rewind (the
   * session's grants are withdrawn).
   */
  constructor(runtime: Runtime, sessions: () => SessionWorker, home: string, workspace: string, secrets: readonly string[], rewound: (sessionId: string) => void) {
    this.#runtime = runtime;
    this.#sessions = sessions;
    this.#home = home;
    this.#workspace = workspace;
    this.#secrets = secrets;
    this.#rewound = rewound;
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
      return previewRewind({ runtime: this.#runtime, store, checkpoints, secrets: this.#secrets }, params, signal);
    });
  }

  /** `session.rewind`. */
  apply(id: string, params: MethodParams<"session.rewind">): void {
    this.#sessions().run(id, async (store, signal, commit) => {
      const [{ applyRewind }, checkpoints] = await Promise.all([import("../rewind/session-rewind.ts"), this.#store()]);
      const applied = await applyRewind({ runtime: this.#runtime, store, checkpoints, secrets: this.#secrets }, params, signal, commit);
      if (applied.ok) this.#rewound(params.session_id);
      return applied;
    });
  }
}
