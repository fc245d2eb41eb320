/**
 * Session titles (`docs/protocol.md#session-titles`): after a run that
 * completed durably on a session without a title, one auxiliary titling
 * request to the selected model (`runner/title-request.ts`); a usable
 * answer, judged by the spec's title rule (`store/discovery/title.ts`), is
 * appended as one `session_title` record, which `session.list` then shows.
 *
 * It starts only once the run's `run.finished` was handed to the writer,
 * so it never delays or changes the terminal event, and it sends no event
 * at all (the spec: "Omit late auxiliary/title UI updates"); a failure
 * leaves nothing but the history without a title. The child goes on
 * serving meanwhile: no request is refused because a title is pending.
 * The append waits until neither a run nor a session operation is running,
 * then holds the store for that one write (a turn or session operation
 * arriving meanwhile starts right after it: see {@link SessionTitles.quiet}),
 * and keeps the run's revision pageable, since the record projects nothing.
 * Closing cancels it, and cleanup waits for it to stop before the session's
 * leases are released (the spec: "retain their backend ownership until
 * cleanup completes"). At most one request per session and child.
 *
 * @module
 */

import type { EventData } from "../../protocol/events.ts";
import type { RunConfig } from "../../runner/run-config.ts";
import { requestTitle, type TitleExcerpt } from "../../runner/title-request.ts";
import { generatedTitle } from "../../store/discovery/title.ts";
import type { SessionRecord, SessionTitleRecord } from "../../store/records.ts";
import type { SessionStore } from "../../store/sessions.ts";

/** What titling needs from the workers around it. */
export interface TitleParts {
  readonly store: SessionStore;
  /** `agent.titles.enabled`. */
  readonly enabled: boolean;
  /** Known secret values: a title holding one is never stored. */
  readonly secrets: readonly string[];
  /** The configuration a request uses now (the current selection). */
  config(): RunConfig;
  /** Wall-clock milliseconds, for the record's stamp. */
  wallNow(): number;
  /** Whether a run or a session operation is running, so the store is not free to append to. */
  busy(): boolean;
  /** Resolves once the run and the session operation running now have ended. */
  whenFree(): Promise<unknown>;
}

/** A run that ended, as titling sees it. */
export interface FinishedTurn {
  readonly sessionId: string;
  /** Its terminal event's data. */
  readonly finished: EventData<"run.finished">;
  /** The records it stored durably. */
  readonly records: readonly SessionRecord[];
}

/** Owns the child's one titling task. */
export class SessionTitles {
  readonly #parts: TitleParts;
  /** Sessions a title was asked for in this child, whatever came of it. */
  readonly #asked = new Set<string>();
  #task: Promise<void> | null = null;
  #abort: AbortController | null = null;
  #appending: Promise<void> | null = null;
  #closed = false;

  /** Creates the owner; nothing runs until {@link afterRun}. */
  constructor(parts: TitleParts) {
    this.#parts = parts;
  }

  /** Called once a run's terminal event was handed to the writer: starts a titling task when the run earns one. */
  afterRun(turn: FinishedTurn): void {
    const { store, enabled } = this.#parts;
    if (!enabled || this.#closed || this.#task !== null || this.#asked.has(turn.sessionId)) return;
    if (turn.finished.outcome !== "completed" || turn.finished.persistence !== "durable") return;
    if (store.turnRefusal(turn.sessionId) !== null || store.metadata?.titled !== false) return;
    const excerpt = excerptOf(turn.records);
    if (excerpt === null) return;
    this.#asked.add(turn.sessionId);
    const abort = new AbortController();
    this.#abort = abort;
    this.#task = this.#title(turn.sessionId, excerpt, abort.signal)
      .catch(() => {})
      .finally(() => {
        this.#task = null;
        this.#abort = null;
      });
  }

  /** The title append in flight, or null: turns and session operations wait for it before touching the store. */
  quiet(): Promise<void> | null {
    return this.#appending;
  }

  /** Cancels the task for a closing connection, and any later one; a started append still finishes (one short write). */
  cancel(): void {
    this.#closed = true;
    this.#abort?.abort();
  }

  /** Resolves once no titling task is running. */
  idle(): Promise<void> {
    return this.#task ?? Promise.resolve();
  }

  async #title(sessionId: string, excerpt: TitleExcerpt, signal: AbortSignal): Promise<void> {
    const parts = this.#parts;
    const reply = await requestTitle(parts.config(), excerpt, signal);
    const title = reply === null ? null : generatedTitle(reply, parts.secrets);
    if (title === null) return;
    while (parts.busy() && !signal.aborted) await parts.whenFree();
    // Checked again: the session may have been replaced, reopened stale, or titled meanwhile.
    const store = parts.store;
    if (signal.aborted || store.turnRefusal(sessionId) !== null || store.metadata?.titled !== false) return;
    const record: SessionTitleRecord = { v: 1, type: "session_title", session_id: sessionId, at: new Date(parts.wallNow()).toISOString(), title };
    // Set before the first await, so nothing can start on the store between the check and the append.
    // It never rejects: a turn or session operation waiting for it must not fail because a title did.
    this.#appending = append(store, record).catch(() => {}).finally(() => (this.#appending = null));
    await this.#appending;
  }
}

/** Appends `record` through a turn journal (leases, the writer check, one write and fsync), outside any turn. */
async function append(store: SessionStore, record: SessionTitleRecord): Promise<void> {
  const begun = store.beginTurn();
  await begun.journal.appendInput([record]);
  await store.completeUnprojected(begun.journal);
}

/** The prompt and the answers of a turn's records, or null when it stored no prompt or no answer. */
function excerptOf(records: readonly SessionRecord[]): TitleExcerpt | null {
  const prompt = records.find((record) => record.type === "user_input")?.text;
  const answers = records.flatMap((record) => (record.type === "assistant_message" && record.text !== "" ? [record.text] : []));
  return prompt === undefined || answers.length === 0 ? null : { prompt, answer: answers.join("\n\n") };
}
