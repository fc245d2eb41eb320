/**
 * The workers a ready child runs on its admitted startup snapshot: the
 * session/history worker (which also lists sessions) and the turn worker,
 * sharing one session store and
 * excluding each other (a session operation during a run is `busy`, and a
 * turn during a session operation too). Run events reach the ordered writer
 * through a sink that leaves room for responses. On close both are
 * cancelled, and the session leases are released only after the run and the
 * last session operation have let go of the store.
 *
 * @module
 */

import { LIMITS } from "../protocol/limits.ts";
import { runConfig } from "./turns/configure-run.ts";
import type { RunEventSink } from "../runner/event-channel.ts";
import { TurnWorker } from "./turns/turn-worker.ts";
import type { Runtime } from "../host/runtime.ts";
import { configuredSecrets } from "../config/providers.ts";
import type { StartupSnapshot } from "../admission/startup.ts";
import { SessionWorker } from "./sessions/session-worker.ts";
import { CatalogOperations } from "./catalog-operations.ts";
import { SessionStore } from "../store/sessions.ts";
import { SessionDiscovery } from "../store/discovery/discovery.ts";
import { SessionListing } from "../store/discovery/listing.ts";
import { joinPath } from "../util/paths.ts";
import { OperationCanceller } from "./cancel/operation-cancel.ts";
import type { ProtocolOutput } from "../transport/output.ts";

/** Writer slots run events leave free, so responses to requests pipelined during a run still fit. */
const RESPONSE_RESERVE = 4;
const EVENT_SLOTS = LIMITS.pending_output_frames - RESPONSE_RESERVE;

/** The two workers of a ready child. */
export interface Workers {
  /** `session.*` and `history.page`. */
  readonly sessions: SessionWorker;
  /** `turn.*` and `approval.answer`. */
  readonly turns: TurnWorker;
  /** `model.*`, `selection.set` and the selection side of `session.create`/`session.open`, on the session worker. */
  readonly catalog: CatalogOperations;
  /** `operation.cancel`, over the session worker's cancellable operations. */
  readonly operations: OperationCanceller;
}

function createWorkers(runtime: Runtime, output: ProtocolOutput, snapshot: StartupSnapshot, outputFailed: () => void): Workers {
  const writer = output.writer;
  const secrets = configuredSecrets(snapshot.settings, (name) => runtime.env(name), snapshot.credentials);
  const store = new SessionStore({ runtime, home: snapshot.home, cwd: snapshot.cwd, instanceId: output.instanceId, secrets });
  let turns: TurnWorker | null = null;
  const scan = { runtime, directory: joinPath(snapshot.home, "sessions"), cwd: snapshot.cwd, secrets, attached: () => store.sessionId };
  const discovery = { listing: new SessionListing(scan), discovery: new SessionDiscovery(scan) };
  const sessions = new SessionWorker(store, discovery, output, () => turns?.runId != null);
  const sink: RunEventSink = {
    // A failed writer reports room so the channel drains into its refusing enqueue instead of waiting.
    room: () => (writer.failure !== null ? 1 : Math.max(0, EVENT_SLOTS - writer.pending)),
    whenRoom: () => writer.whenPendingBelow(EVENT_SLOTS),
    send: (event) => output.event(event.event, event.data),
  };
  const catalog = new CatalogOperations(runtime, snapshot, store, sessions);
  const base = runConfig(runtime, snapshot, secrets);
  turns = new TurnWorker({
    runtime,
    store,
    sessionsBusy: () => sessions.busy,
    replies: output,
    sink,
    // Read when a run starts: turns use the selection current then.
    get config() {
      return catalog.runConfig(base);
    },
    beforeRun: (signal) => catalog.beforeRun(signal),
    outputFailed,
  });
  return { sessions, turns, catalog, operations: new OperationCanceller([sessions], output) };
}

/** The workers of one child: none until startup admitted a snapshot, then both for good. */
export class ReadyWorkers {
  readonly #runtime: Runtime;
  readonly #output: ProtocolOutput;
  readonly #outputFailed: () => void;
  #workers: Workers | null = null;

  /**
   * Prepares workers that will answer through `output`; `outputFailed`
   * closes the connection when a run's terminal event cannot be delivered.
   */
  constructor(runtime: Runtime, output: ProtocolOutput, outputFailed: () => void) {
    this.#runtime = runtime;
    this.#output = output;
    this.#outputFailed = outputFailed;
  }

  /** Both workers once startup succeeded, else `null`: what the phase gate and `status` look at. */
  get current(): Workers | null {
    return this.#workers;
  }

  /** Creates both workers over one session store for `snapshot`. */
  start(snapshot: StartupSnapshot): void {
    this.#workers = createWorkers(this.#runtime, this.#output, snapshot, this.#outputFailed);
  }

  /** Warm-up: the first turn should not pay for loading the provider clients and tools. */
  warm(): void {
    void this.#workers?.turns.warm().catch(() => {});
  }

  /**
   * Cancels the active run and the running session operation for a closing
   * connection (answering the latter `operation_cancelled` when `answer` is
   * set). Returns the cleanup that ends with the session leases released.
   */
  cancel(answer: boolean): Promise<void> {
    const workers = this.#workers;
    if (workers === null) return Promise.resolve();
    workers.turns.cancelForClose();
    workers.sessions.cancel(answer);
    // The run uses the store until its cleanup ends; leases are released after both.
    return workers.turns.idle().then(() => workers.sessions.close());
  }

  /** Settles once no run is active: its cleanup finished and its terminal event was handed to the writer. */
  settled(): Promise<void> {
    return this.#workers?.turns.idle() ?? Promise.resolve();
  }
}
