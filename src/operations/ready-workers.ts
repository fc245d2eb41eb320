/**
 * The ready child's worker set, loaded on first use. Startup's success
 * creates only the selection (`status` shows it in the `initialize` answer);
 * the workers themselves (`workers.ts`: the session store, discovery, the
 * catalog, turn admission) are a separate chunk, imported by the first
 * request that needs a ready child. Requests that arrive while it loads wait
 * for it and then run in arrival order; a close meanwhile lets them start
 * once it is in and then cancels them (docs/protocol.md, `initialize`). On
 * close both workers are cancelled, and the session leases are released only
 * after the run and the last session operation have let go of the store.
 *
 * Once the workers exist, the run module (providers, tools) warms in the
 * background: a child asked for sessions is likely to run a turn next, and a
 * child asked for nothing loads neither.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { StartupSnapshot } from "../admission/startup.ts";
import { configuredSecrets } from "../config/providers.ts";
import { ErrorCode, type StartupErrorCode } from "../protocol/errors.ts";
import type { ReadyRunner } from "../protocol/phase-gate.ts";
import type { Capability } from "../protocol/negotiation.ts";
import type { ProtocolOutput } from "../transport/output.ts";
import { SelectionState } from "./catalog/selection-state.ts";
import type { ReadyView } from "./status.ts";
import type { ClientToolSpec } from "../protocol/client-tool-registry.ts";
import type { Workers } from "./workers.ts";

/** The workers of one child: none until startup admitted a snapshot, then loaded once, for good. */
export class ReadyWorkers implements ReadyView {
  readonly #runtime: Runtime;
  readonly #output: ProtocolOutput;
  readonly #outputFailed: () => void;
  readonly #loadFailed: (code: StartupErrorCode) => void;
  readonly #negotiated: (capability: Capability) => boolean;
  #ready: { readonly snapshot: StartupSnapshot; readonly selection: SelectionState; readonly clientTools: readonly ClientToolSpec[] | null } | null = null;
  #workers: Workers | null = null;
  #loading: Promise<Workers | null> | null = null;

  /**
   * Prepares workers that will answer through `output`; `outputFailed`
   * closes the connection when a run's terminal event cannot be delivered;
   * `loadFailed` fails the child's lifecycle with the code the requests that
   * waited for a chunk that cannot load are answered; `negotiated` tells
   * what the admitted `initialize` required.
   */
  constructor(
    runtime: Runtime,
    output: ProtocolOutput,
    outputFailed: () => void,
    loadFailed: (code: StartupErrorCode) => void,
    negotiated: (capability: Capability) => boolean,
  ) {
    this.#runtime = runtime;
    this.#output = output;
    this.#outputFailed = outputFailed;
    this.#loadFailed = loadFailed;
    this.#negotiated = negotiated;
  }

  /** What `status` shows of the ready child once startup succeeded, else `null`. */
  get view(): ReadyView | null {
    return this.#ready === null ? null : this;
  }

  /** How the phase gate runs a ready request once startup succeeded, else `null`. */
  get runner(): ReadyRunner<Workers> | null {
    return this.#ready === null ? null : (handle, id) => this.#run(handle, id);
  }

  /** The selection startup admitted, and every one since. */
  get selection(): SelectionState {
    return this.#ready!.selection;
  }

  /** The session of the last completed attachment. */
  get sessionId(): string | null {
    return this.#workers?.catalog.sessionId ?? null;
  }

  /** The active run, until its terminal event was handed to the writer. */
  get runId(): string | null {
    return this.#workers?.turns.runId ?? null;
  }

  /**
   * Answers `agent.info` (negotiated, ready child only) from the admitted
   * snapshot, redacting what the session store redacts; its module loads on
   * the first call and the workers never load for it.
   */
  info(id: string): void {
    const { snapshot } = this.#ready!;
    const secrets = configuredSecrets(snapshot.settings, (name) => this.#runtime.env(name), snapshot.credentials, snapshot.mcp?.secrets());
    void import("./info/agent-info.ts").then(
      ({ agentInfo }) => this.#output.result(id, agentInfo(snapshot, secrets)),
      // A damaged installation: answered like a worker chunk that cannot load.
      () => this.#output.error(id, ErrorCode.startupFailed),
    );
  }

  /** Records the admitted `snapshot` (its selection, with a first revision, is what `status` shows from now on) and the client's tools. */
  start(snapshot: StartupSnapshot, clientTools: readonly ClientToolSpec[] | null = null): void {
    const { selection } = snapshot;
    this.#ready = {
      snapshot,
      clientTools,
      selection: new SelectionState(this.#runtime, {
        provider: selection.provider,
        model: selection.model,
        endpoint: selection.endpoint,
        requested: selection.effort,
        hint: snapshot.selectionHint ?? null,
      }),
    };
  }

  /**
   * Cancels the active run and the running session operation for a closing
   * connection (answering the latter `operation_cancelled` when `answer` is
   * set), then closes the MCP servers. Requests still waiting for the
   * workers to load were admitted before the close: they run first and are
   * then cancelled like any other. Returns the cleanup that ends with the
   * session leases released, after the MCP servers are closed.
   */
  cancel(answer: boolean): Promise<void> {
    const closeMcp = () => this.#ready?.snapshot.mcp?.close() ?? Promise.resolve();
    const cancel = (workers: Workers | null): Promise<void> => {
      if (workers === null) return closeMcp();
      workers.turns.cancelForClose();
      workers.sessions.cancel(answer);
      // The run uses the store and the MCP servers until its cleanup ends; leases are released after all of it.
      return workers.turns.idle().then(closeMcp).then(() => workers.sessions.close());
    };
    return this.#loading === null ? cancel(this.#workers) : this.#loading.then(cancel);
  }

  /**
   * Settles once no run is active: its cleanup finished and its terminal
   * event was handed to the writer. Titling is cleanup, not output: it is
   * waited for by {@link cancel}'s cleanup, not here.
   */
  settled(): Promise<void> {
    if (this.#loading === null) return this.#workers?.turns.runEnded() ?? Promise.resolve();
    return this.#loading.then((workers) => workers?.turns.runEnded());
  }

  #run(handle: (workers: Workers) => void, id: string): void {
    if (this.#workers !== null) return handle(this.#workers);
    void this.#load().then((workers) => {
      if (workers === null) return this.#output.error(id, ErrorCode.startupFailed);
      handle(workers);
    });
  }

  #load(): Promise<Workers | null> {
    if (this.#loading !== null) return this.#loading;
    const registry = this.#ready!.clientTools;
    // The client tools' chunk loads beside the workers', and only when a registry was admitted.
    const clientTools = registry === null ? null : import("../client-tools/client-tools.ts");
    this.#loading = Promise.all([import("./workers.ts"), clientTools]).then(
      ([{ createWorkers }, tools]) => {
        const ready = this.#ready!;
        const settings = ready.snapshot.settings.client_tools;
        const workers = createWorkers({
          clientTools: tools === null ? null : tools.clientToolSet(registry!, settings, this.#runtime, this.#output),
          runtime: this.#runtime,
          output: this.#output,
          snapshot: ready.snapshot,
          selection: ready.selection,
          outputFailed: this.#outputFailed,
          reportUsage: this.#negotiated("run.usage"),
          approvalScope: this.#negotiated("approval.scope"),
          toolCards: this.#negotiated("tool.cards"),
          rewind: this.#negotiated("session.rewind"),
        });
        this.#workers = workers;
        void workers.turns.warm().catch(() => {});
        return workers;
      },
      () => {
        // The chunk could not load (a damaged installation): the child cannot serve what startup promised,
        // so it fails as a startup does; the requests that waited are answered the same code (#run).
        this.#loadFailed(ErrorCode.startupFailed);
        return null;
      },
    );
    return this.#loading;
  }
}
