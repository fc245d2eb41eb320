/**
 * What a `rewind` record (format 4) does to the history before it: every
 * record from the start of turn `from_turn` up to the rewind is gone from the
 * provider replay and from the projection, as if those turns had never run
 * (docs/features/local-agent-extensions.md, "session.rewind"). The file
 * stays append-only: the records are still there, and a reader of format 3
 * or older refuses the whole history rather than show them.
 *
 * Two kinds of record survive the cut because they are the session's
 * settings, not its conversation: `session_preferences` (the selection the
 * user chose stays chosen) and `session_title`.
 *
 * @module
 */

import type { SessionRecord } from "./records.ts";

const SETTINGS: ReadonlySet<string> = new Set(["session", "session_preferences", "session_title"]);

/**
 * `records` with every rewind applied, in stored order, the rewind records
 * themselves left out. A rewind whose `from_turn` has no `turn_started`
 * among the records still standing drops nothing: it names a turn an
 * earlier rewind or nothing at all holds, and the writer never writes one.
 */
export function applyRewinds(records: readonly SessionRecord[]): SessionRecord[] {
  if (!records.some((record) => record.type === "rewind")) return [...records];
  let out: SessionRecord[] = [];
  for (const record of records) {
    if (record.type !== "rewind") {
      out.push(record);
      continue;
    }
    const start = out.findIndex((earlier) => earlier.type === "turn_started" && earlier.turn_id === record.from_turn);
    if (start < 0) continue;
    out = [...out.slice(0, start), ...out.slice(start).filter((dropped) => SETTINGS.has(dropped.type))];
  }
  return out;
}

/** Whether `records` hold a rewind, so no projection of them can extend an earlier one. */
export function holdsRewind(records: readonly SessionRecord[]): boolean {
  return records.some((record) => record.type === "rewind");
}
