/**
 * What a run needs from durable storage, defined here so the runner depends
 * on this contract rather than on the store's classes: `SessionStore` and
 * `TurnJournal` hold attachments, leases, appenders and revisions, none of
 * which a run should see. `operations/turns` binds the store to it.
 *
 * The records stay typed by `store/records.ts`: they are the session file's
 * format, defined once with their schemas, so restating them in runner terms
 * would only add a second copy and a mapping to keep in step.
 *
 * @module
 */

import type { ErrorCode } from "../protocol/errors.ts";
import type { ConversationRecord } from "../store/conversation-records.ts";
import type { SessionRecord } from "../store/records.ts";

/** Whether an append was acknowledged durable, and when not, whether the session is full. */
export interface JournalAck {
  /** True once every record of the append is durable; false when none is acknowledged. */
  readonly ok: boolean;
  /**
   * On failure, `content_limit` when the records would take the session
   * file past the stored-history bound: nothing was written, the session is
   * full (any other code: the write failed).
   */
  readonly code?: ErrorCode;
}

/** Token totals of a session's stored turns, summed from their `usage` records. */
export interface SessionTokens {
  readonly input: number;
  readonly output: number;
}

/** The durable side of one turn, begun when the turn was admitted and ended by {@link RunJournal.complete}. */
export interface RunJournal {
  /** The session's earlier turns as stored, replayed to the provider before the new input. */
  readonly conversation: readonly ConversationRecord[];
  /** The session's token totals before this turn (the `run.usage` event adds the turn's). */
  readonly sessionTokens: SessionTokens;
  /** The message id the input will have in the projected history (`input.persisted` names it). */
  readonly inputMessageId: string;
  /**
   * Makes the turn's opening records durable, taking whatever leases that
   * needs and creating the session file for a lazy session. Until this
   * succeeds nothing of the turn is stored, and later appends fail.
   */
  appendInput(records: readonly SessionRecord[]): Promise<JournalAck>;
  /** Appends `records` after the input, all or none acknowledged. */
  append(records: readonly SessionRecord[]): Promise<JournalAck>;
  /** A revision naming the history right after the input append. */
  inputRevision(): Promise<string>;
  /**
   * Ends the durable side (always called, once): releases what the turn
   * held and, when the input became `durable`, returns the revision of the
   * history the turn left, or null when it cannot be paged: it could not
   * be read back, or its projection exceeds the snapshot budget.
   */
  complete(durable: boolean): Promise<string | null>;
}
