/**
 * A hand-driven {@link RunEventSink} and run-event builders for the event
 * channel tests: the sink holds what it is sent until the test releases it,
 * the way the ordered writer holds frames until a write completes.
 *
 * @module
 */

import type { RunEventSink } from "../../src/runner/event-channel.ts";
import type { CriticalEvent, RunEvent, RunScope, TerminalEvent } from "../../src/runner/run-events.ts";

/** The scope every test event carries. */
export const SCOPE: RunScope = { session_id: "s-1", run_id: "r-1" };

/** A sink with `capacity` slots; sent events occupy one until {@link release}d. */
export class HeldSink implements RunEventSink {
  /** Everything sent, in order. */
  readonly sent: RunEvent[] = [];
  /** Slots in use. */
  held = 0;
  /** Contract breaches seen, collected rather than thrown into the channel's continuations. */
  readonly violations: string[] = [];
  /** Called on every send before it is recorded, so a test can check invariants at that instant. */
  onSend: (event: RunEvent) => void = () => {};
  #capacity: number;
  #waiters: (() => void)[] = [];

  /** Creates a sink with `capacity` free slots. */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Free slots. */
  room(): number {
    return this.#capacity - this.held;
  }

  /** Resolves once a slot is free. */
  whenRoom(): Promise<void> {
    if (this.room() > 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Records `event` and occupies a slot; notes a violation if the channel sent without room. */
  send(event: RunEvent): void {
    if (this.room() <= 0) this.violations.push(`sent ${event.event} without room`);
    this.onSend(event);
    this.held++;
    this.sent.push(event);
  }

  /** Frees `count` occupied slots (as a completed write would). */
  release(count = this.held): void {
    this.held -= Math.min(count, this.held);
    this.#wake();
  }

  /** Changes the capacity, as other frames entering or leaving a shared writer would. */
  resize(capacity: number): void {
    this.#capacity = capacity;
    this.#wake();
  }

  #wake(): void {
    if (this.room() <= 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** An `activity` event whose `activity_id` is `id`. */
export function activity(id: string): CriticalEvent {
  return { event: "activity", data: { ...SCOPE, activity_id: id, kind: "tool", state: "started", name: "read_file", summary: `step ${id}` } };
}

/** The run's terminal event. */
export function terminal(outcome: TerminalEvent["data"]["outcome"] = "completed"): TerminalEvent {
  return { event: "run.finished", data: { ...SCOPE, outcome, persistence: "durable", revision: "rev-2", error_code: null } };
}

/** The `message.delta` events among `events`, as `[message_id, part, text]`. */
export function deltas(events: readonly RunEvent[]): [string, number, string][] {
  return events.flatMap((e) => e.event === "message.delta" ? [[e.data.message_id, e.data.part, e.data.text] as [string, number, string]] : []);
}

/** Lets pending promise continuations run. */
export async function microtasks(turns = 16): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
