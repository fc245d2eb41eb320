/**
 * The workers a ready child runs on its admitted startup snapshot: the
 * session/history worker (which also lists sessions) and the turn worker,
 * sharing one session store and excluding each other (a session operation
 * during a run is `busy`, and a turn during a session operation too). Run
 * events reach the ordered writer through a sink that leaves room for
 * responses.
 *
 * This module and everything only it imports (the store, discovery, the
 * catalog, the runner's admission parts) is the operations chunk: it loads on
 * the first request that needs a ready child, never before the `initialize`
 * answer (`ready-workers.ts`; the start-up budget in docs/architecture.md).
 *
 * @module
 */

import { SessionGrants } from "../grants/session-grants.ts";
import { LIMITS } from "../protocol/limits.ts";
import { runConfig } from "./turns/configure-run.ts";
import type { RunEventSink } from "../runner/event-channel.ts";
import { TurnWorker } from "./turns/turn-worker.ts";
import type { Runtime } from "../host/runtime.ts";
import { addSecrets, configuredSecrets } from "../config/providers.ts";
import type { StartupSnapshot } from "../admission/startup.ts";
import { SessionWorker } from "./sessions/session-worker.ts";
import { CatalogOperations } from "./catalog-operations.ts";
import type { SelectionState } from "./catalog/selection-state.ts";
import { SessionStore } from "../store/sessions.ts";
import { SessionDiscovery } from "../store/discovery/discovery.ts";
import { SessionListing } from "../store/discovery/listing.ts";
import { joinPath } from "../util/paths.ts";
import { OperationCanceller } from "./cancel/operation-cancel.ts";
import { RewindOperations } from "./rewind-operations.ts";
import type { ProtocolOutput } from "../transport/output.ts";
import { titlesEnabled } from "../config/title-settings.ts";
import { SessionTitles } from "./turns/session-titles.ts";
import type { ClientToolCalls } from "../client-tools/calls.ts";
import type { ClientToolSet } from "../client-tools/client-tools.ts";
import { childJournal } from "../store/child-journal.ts";
import { childRunJournal } from "./turns/child-journal-port.ts";

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
  /** `client.tool.result`, over the pending client tool calls; null without registered client tools. */
  readonly clientTools: ClientToolCalls | null;
  /** `session.rewind.preview` and `session.rewind` (negotiated), on the session worker. */
  readonly rewind: RewindOperations;
}

/** What the workers are built from: the connection's parts and the admitted snapshot. */
export interface WorkerParts {
  readonly runtime: Runtime;
  readonly output: ProtocolOutput;
  readonly snapshot: StartupSnapshot;
  /** The selection `status` has shown since the `initialize` answer; the catalog operations take it over. */
  readonly selection: SelectionState;
  /** Closes the connection when a run's terminal event cannot be delivered. */
  readonly outputFailed: () => void;
  /** Whether the admitted `initialize` required `run.usage`. */
  readonly reportUsage: boolean;
  /** Whether the admitted `initialize` required `approval.scope`: the child then holds session grants. */
  readonly approvalScope?: boolean;
  /** Whether the admitted `initialize` required `tool.cards`. */
  readonly toolCards?: boolean;
  /** Whether the admitted `initialize` required `session.rewind`: the run's file writes then take checkpoints. */
  readonly rewind?: boolean;
  /** The client's registered tools (`client.tools`), loaded only when a registry was admitted; else null. */
  readonly clientTools: ClientToolSet | null;
}

/** Creates both workers over one session store. */
export function createWorkers(parts: WorkerParts): Workers {
  const { runtime, output, snapshot, selection, outputFailed, reportUsage, approvalScope, toolCards, rewind: rewinds, clientTools } = parts;
  const writer = output.writer;
  // The started MCP servers' env values, headers and tokens: a server may echo them in a tool result.
  // Every reader holds this one list, which grows as a login's tokens are refreshed (during a call).
  const secrets = configuredSecrets(snapshot.settings, (name) => runtime.env(name), snapshot.credentials, snapshot.mcp?.secrets());
  snapshot.mcp?.onSecretsChanged((more) => addSecrets(secrets, more));
  const store = new SessionStore({ runtime, home: snapshot.home, cwd: snapshot.cwd, instanceId: output.instanceId, secrets, cards: toolCards ?? false });
  let turns: TurnWorker | null = null;
  const scan = { runtime, directory: joinPath(snapshot.home, "sessions"), cwd: snapshot.cwd, secrets, attached: () => store.sessionId };
  const discovery = { listing: new SessionListing(scan), discovery: new SessionDiscovery(scan) };
  const storage = { runtime, home: snapshot.home, instanceId: output.instanceId, cwd: snapshot.cwd };
  // In memory for the child's lifetime, never written anywhere: gone when the child exits.
  const grants = approvalScope === true ? new SessionGrants() : null;
  const rewind = new RewindOperations(runtime, () => sessions, snapshot.home, snapshot.cwd, secrets, (sessionId) => grants?.revoke(sessionId));
  const plain = runConfig(runtime, snapshot, secrets, clientTools?.tools ?? null, (childId) => childRunJournal(childJournal(storage, childId)));
  const base = rewinds === true ? { ...plain, checkpoints: (sessionId: string, turnId: string) => rewind.taker(sessionId, turnId) } : plain;
  const titles: SessionTitles = new SessionTitles({
    store,
    enabled: titlesEnabled(snapshot.settings.agent?.titles),
    secrets,
    config: () => catalog.runConfig(base),
    wallNow: () => runtime.wallNow(),
    busy: () => turns?.runId != null || sessions.busy,
    whenFree: () => Promise.all([turns?.runEnded(), sessions.settled()]),
  });
  const sessions: SessionWorker = new SessionWorker(store, discovery, output, () => turns?.runId != null, () => titles.quiet());
  const sink: RunEventSink = {
    // A failed writer reports room so the channel drains into its refusing enqueue instead of waiting.
    room: () => (writer.failure !== null ? 1 : Math.max(0, EVENT_SLOTS - writer.pending)),
    whenRoom: () => writer.whenPendingBelow(EVENT_SLOTS),
    send: (event) => output.event(event.event, event.data),
  };
  const catalog = new CatalogOperations(runtime, snapshot, selection, store, sessions);
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
    reportUsage,
    toolCards: toolCards ?? false,
    titles,
    ...(grants !== null ? { grants } : {}),
  });
  return { sessions, turns, catalog, operations: new OperationCanceller([sessions], output), clientTools: clientTools?.calls ?? null, rewind };
}
