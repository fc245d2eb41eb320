/**
 * The workers a ready child runs on its admitted startup snapshot: the
 * session/history worker and the turn worker, sharing one session store and
 * excluding each other (a session operation during a run is `busy`, and a
 * turn during a session operation too). Run events reach the ordered writer
 * through a sink that leaves room for responses.
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
import { SessionStore } from "../store/sessions.ts";
import type { OrderedWriter } from "../transport/writer.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import type { RunEvent } from "../runner/run-events.ts";

/** Writer slots run events leave free, so responses to requests pipelined during a run still fit. */
const RESPONSE_RESERVE = 4;
const EVENT_SLOTS = LIMITS.pending_output_frames - RESPONSE_RESERVE;

/** The two workers of a ready child. */
export interface Workers {
  /** `session.*` and `history.page`. */
  readonly sessions: SessionWorker;
  /** `turn.*` and `approval.answer`. */
  readonly turns: TurnWorker;
}

/** What the workers need from the connection. */
export interface WorkerHost {
  /** The runtime. */
  readonly runtime: Runtime;
  /** This child's instance id (written into leases). */
  readonly instanceId: string;
  /** Responses. */
  readonly replies: WorkerReplies;
  /** The ordered writer, for the event sink's room. */
  readonly writer: OrderedWriter;
  /** Encodes and enqueues one run event. */
  sendEvent(event: RunEvent): void;
}

/** Creates both workers over one session store for `snapshot`. */
export function createWorkers(host: WorkerHost, snapshot: StartupSnapshot): Workers {
  const { runtime, writer } = host;
  const secrets = configuredSecrets(snapshot.settings, (name) => runtime.env(name), snapshot.credentials);
  const store = new SessionStore({ runtime, home: snapshot.home, cwd: snapshot.cwd, instanceId: host.instanceId, secrets });
  let turns: TurnWorker | null = null;
  const sessions = new SessionWorker(store, host.replies, () => turns?.runId != null);
  const sink: RunEventSink = {
    // A failed writer reports room so the channel drains into its refusing enqueue instead of waiting.
    room: () => (writer.failure !== null ? 1 : Math.max(0, EVENT_SLOTS - writer.pending)),
    whenRoom: () => writer.whenPendingBelow(EVENT_SLOTS),
    send: (event) => host.sendEvent(event),
  };
  turns = new TurnWorker({
    runtime,
    store,
    sessionsBusy: () => sessions.busy,
    replies: host.replies,
    sink,
    config: runConfig(runtime, snapshot, secrets),
  });
  return { sessions, turns };
}
