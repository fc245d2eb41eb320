/**
 * The run events of the spec's event table, as typed data before framing:
 * every event carries its run's scope, so a client can tell a late event of
 * an old run from one of the current run.
 *
 * @module
 */

/** What every run event's `data` carries. */
export type RunScope = {
  /** The attached session. */
  readonly session_id: string;
  /** The run the event belongs to. */
  readonly run_id: string;
};

/** A run event named `Name` whose `data` is `Data` plus the run's scope. */
export type ScopedEvent<Name extends string, Data> = { readonly event: Name; readonly data: RunScope & Readonly<Data> };

/** One run event as the spec's event table defines it, before framing. */
export type RunEvent =
  | ScopedEvent<"input.persisted", { message_id: string; durable: true; revision: string }>
  | ScopedEvent<"message.delta", { message_id: string; part: number; text: string }>
  | ScopedEvent<"message.reconcile", { message_id: string; part: number; text: string; last_part: boolean; partial: boolean }>
  | ScopedEvent<"activity", {
    activity_id: string;
    kind: "tool" | "subagent" | "compaction";
    state: "started" | "completed" | "failed";
    name: string;
    summary: string;
  }>
  | ScopedEvent<"approval.requested", { approval_id: string; summary: string; expires_in_ms: number }>
  | ScopedEvent<"diagnostic", { code: string; summary: string }>
  | ScopedEvent<"run.finished", {
    outcome: "completed" | "cancelled" | "failed";
    persistence: "durable" | "degraded" | "not_started";
    revision: string | null;
    error_code: string | null;
  }>;

/** The one terminal event of a run. */
export type TerminalEvent = Extract<RunEvent, { readonly event: "run.finished" }>;

/** Events that wait for room and are never dropped; the terminal one goes through `RunEventChannel.finish()`. */
export type CriticalEvent = Exclude<RunEvent, { readonly event: "message.delta" | "run.finished" }>;
