/**
 * A subagent's history (`store/child-journal.ts`) bound to the runner's
 * journal port, as the turn worker binds a turn's: a child history starts
 * empty, is never paged and has no revision to report.
 *
 * @module
 */

import type { RunJournal } from "../../runner/journal-port.ts";
import type { ChildJournal } from "../../store/child-journal.ts";

/** `journal` as the runner's {@link RunJournal}. */
export function childRunJournal(journal: ChildJournal): RunJournal {
  return {
    conversation: [],
    sessionTokens: { input: 0, output: 0 },
    inputMessageId: "m0",
    appendInput: (records) => journal.appendInput(records),
    append: (records) => journal.append(records),
    // A child history is never paged: history.page reaches primary histories only.
    inputRevision: () => Promise.resolve(""),
    complete: async () => {
      await journal.close();
      return null;
    },
  };
}
