/**
 * The catalog and selection operations of a ready child, bound to its
 * admitted snapshot: `model.catalog`, `model.catalog.status`,
 * `model.refresh`, `selection.set`, and the selection side of
 * `session.create` / `session.open`. All of them run on the one session
 * worker, so they are serialised with each other and with history work, and
 * are `busy` during a turn, exactly as the spec wants; `status` keeps reading
 * the last completed selection from memory meanwhile.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { MethodParams } from "../protocol/methods.ts";
import type { StartupSnapshot } from "../admission/startup.ts";
import type { RunConfig } from "../runner/run-config.ts";
import type { SessionStore, StoreResult } from "../store/sessions.ts";
import type { SessionWorker } from "./sessions/session-worker.ts";
import { setSelection, type SelectionDeps } from "./selection/selection-set.ts";
import type { SelectionState } from "./catalog/selection-state.ts";
import { attachSelection } from "./selection/session-restore.ts";
import { observeForTurn, selectionRunConfig, type TurnRefusal } from "./selection/turn-selection.ts";
import { CatalogContext } from "./catalog/catalog-context.ts";
import { catalogStatus } from "./catalog/catalog-status.ts";
import { CatalogSnapshots } from "./catalog/catalog-snapshot.ts";
import { modelCatalog } from "./catalog/model-catalog.ts";
import { modelRefresh } from "./catalog/model-refresh.ts";

/** One child's catalog and selection state and the handlers over it. */
export class CatalogOperations {
  readonly #sessions: SessionWorker;
  readonly #deps: SelectionDeps;
  // The store names a new attachment as soon as it commits, but its selection is restored only
  // afterwards; status names this session, which changes together with the selection.
  #attached: string | null = null;
  // What the last turn admission read of the selected model's context window; a turn starts only after it.
  #cachedWindow: number | null = null;

  /**
   * Binds the operations to `snapshot`, the session `store` and the worker
   * they run on; `selection` is the child's current selection, which
   * `status` showed before these operations were loaded.
   */
  constructor(runtime: Runtime, snapshot: StartupSnapshot, selection: SelectionState, store: SessionStore, sessions: SessionWorker) {
    this.#sessions = sessions;
    this.#deps = { context: new CatalogContext(runtime, snapshot), snapshots: new CatalogSnapshots(runtime), selection, store };
  }

  /** The session of the last completed attachment (`session.create` / `session.open` with its selection), as `status` names it. */
  get sessionId(): string | null {
    return this.#attached;
  }

  /** `model.catalog`. */
  catalog(id: string, params: MethodParams<"model.catalog">): void {
    this.#sessions.run(id, (_store, signal) => modelCatalog(this.#deps, params, signal));
  }

  /** `model.catalog.status` (negotiated). */
  status(id: string): void {
    this.#sessions.run(id, (_store, signal) => catalogStatus(this.#deps.context, this.#deps.selection.value.provider, signal));
  }

  /** `model.refresh` (negotiated). */
  refresh(id: string, params: MethodParams<"model.refresh">): void {
    // Past its commit (right before the rename) the refresh answers its result: no longer cancellable by id.
    this.#sessions.run(id, (_store, signal, commit) => modelRefresh(this.#deps, params.provider, signal, commit));
  }

  /** `selection.set`. */
  select(id: string, params: MethodParams<"selection.set">): void {
    // A durable mutation is not cancellable by id (shutdown still stops it before its append).
    this.#sessions.run(id, (_store, signal) => setSelection(this.#deps, params, signal), false);
  }

  /** `session.create`, then the startup selection with a fresh revision. */
  create(id: string): void {
    this.#sessions.run(id, async (store, signal) => this.#completed(store, await attachSelection(this.#deps, await store.create(), signal)), false);
  }

  /** `session.open`, then the saved selection restored (or the startup one kept). */
  open(id: string, params: MethodParams<"session.open">): void {
    // Past the open's commit (the attachment replaced) the selection restore runs to completion: no longer cancellable by id.
    this.#sessions.run(id, async (store, signal, commit) => this.#completed(store, await attachSelection(this.#deps, await store.open(params.session_id, signal, commit), signal)));
  }

  /** Records a completed attachment: its session and its (already replaced) selection now show together. */
  #completed(store: SessionStore, attached: StoreResult): StoreResult {
    if (attached.ok) this.#attached = store.sessionId;
    return attached;
  }

  /** The configuration of the next run: `base` with the current selection. */
  runConfig(base: RunConfig): RunConfig {
    return selectionRunConfig(base, this.#deps.selection, this.#deps.context, this.#cachedWindow);
  }

  /** The turn admission observation (see `turn-selection.ts`). */
  async beforeRun(signal: AbortSignal): Promise<TurnRefusal | null> {
    const observed = await observeForTurn(this.#deps.selection, this.#deps.context, signal);
    this.#cachedWindow = observed.cachedWindow;
    return observed.refusal;
  }
}
