/**
 * The run events of the spec's event table, as typed data before framing:
 * every event carries its run's scope, so a client can tell a late event of
 * an old run from one of the current run.
 *
 * @module
 */

import type { WireEvent } from "../protocol/events.ts";

/** What every run event's `data` carries. */
export type RunScope = {
  /** The attached session. */
  readonly session_id: string;
  /** The run the event belongs to. */
  readonly run_id: string;
};

/**
 * One run event as the spec's event table defines it, before framing: the
 * type is inferred from the wire schemas in `src/protocol/events.ts`, which
 * the client validates with, so what the runner emits and what a client
 * accepts cannot drift apart.
 */
export type RunEvent = WireEvent;

/** The one terminal event of a run. */
export type TerminalEvent = Extract<RunEvent, { readonly event: "run.finished" }>;

/** Events that wait for room and are never dropped; the terminal one goes through `RunEventChannel.finish()`. */
export type CriticalEvent = Exclude<RunEvent, { readonly event: "message.delta" | "run.finished" }>;
