/**
 * The history of one subagent run (`docs/storage.md`, "Subagent
 * histories"): its own JSONL file `sessions/subagents/<child_id>.jsonl`,
 * written like a lazy session's first turn (a `session` record in front,
 * the writer and active leases next to it, every append durable), in the
 * directory `session.list` and `session.discover` never enter and exact
 * open never reaches (a session id cannot name a subdirectory).
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import type { SessionRecord } from "./records.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type { AppendResult } from "./appender.ts";
import { type JournalFailure, TurnJournal } from "./turn-journal.ts";

/** The directory under `sessions/` holding subagent histories. */
export const SUBAGENTS_DIRECTORY = "subagents";

/** Where child histories go and who writes them. */
export interface ChildStoreContext {
  readonly runtime: Runtime;
  /** Canonical `MC_HOME`. */
  readonly home: string;
  /** This child process's instance id, written into leases. */
  readonly instanceId: string;
  /** The canonical cwd each history's `session` record carries. */
  readonly cwd: string;
}

/** One child history's appends; close it once, whatever happened. */
export interface ChildJournal {
  /** Creates the file with `records` behind its `session` record (the subagents directory first, when missing). */
  appendInput(records: readonly SessionRecord[]): Promise<{ ok: true } | { ok: false; code: JournalFailure }>;
  /** Appends `records` durably, after the input. */
  append(records: readonly SessionRecord[]): Promise<AppendResult>;
  /** Closes the file and releases both leases: nothing appends to a child history after its run. */
  close(): Promise<void>;
}

/** The journal of a new child history `childId` (a fresh UUIDv7, so the file never exists yet). */
export function childJournal(context: ChildStoreContext, childId: string): ChildJournal {
  const directory = joinPath(context.home, "sessions", SUBAGENTS_DIRECTORY);
  const journal = new TurnJournal({
    runtime: context.runtime,
    directory,
    path: joinPath(directory, `${childId}.jsonl`),
    sessionId: childId,
    instanceId: context.instanceId,
    cwd: context.cwd,
    intactLength: null,
    lines: null,
    file: null,
    writerLease: null,
  });
  return {
    appendInput: async (records) => {
      try {
        await context.runtime.fs.mkdir(directory, 0o700);
      } catch {
        return { ok: false, code: ErrorCode.persistenceFailed };
      }
      return await journal.appendInput(records);
    },
    append: (records) => journal.append(records),
    close: () => journal.close(false),
  };
}
