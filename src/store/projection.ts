/**
 * Projects stored session records into the immutable, bounded entry list that
 * `history.page` serves (docs/storage.md, "Records"; the spec's `history.page`).
 *
 * Each entry text goes through reconcile → redact → sanitize → chunk in that
 * order: reconciling first means a secret split across two stored chunks is
 * whole again when redaction looks for it, and chunking last means the byte
 * bounds apply to exactly what goes on the wire.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { EMPTY_HISTORY, type HistorySnapshot, type ProjectionResult, type Slot } from "./history-snapshot.ts";
import { type Cooperation, Slicer } from "./cooperative-slices.ts";
import { chunkSlots } from "./entry-chunking.ts";
import type { Card } from "../protocol/tool-cards.ts";

/**
 * The fields of stored records that the projection reads, named as in
 * docs/storage.md. Declared structurally so the validated record types
 * satisfy it without this module depending on the record schemas.
 */
export type ProjectionRecord =
  | { readonly type: "session" | "session_preferences" | "session_title" | "internal_prompt" | "usage" | "subagent_link" | "rewind" }
  | { readonly type: "turn_started"; readonly turn_id: string }
  | {
    readonly type: "turn_finished";
    readonly turn_id: string;
    readonly outcome: "completed" | "cancelled" | "failed";
  }
  | { readonly type: "user_input"; readonly turn_id: string; readonly message_id: string; readonly text: string }
  | {
    readonly type: "assistant_chunk";
    readonly turn_id: string;
    readonly message_id: string;
    readonly index: number;
    readonly text: string;
  }
  | {
    readonly type: "assistant_message";
    readonly turn_id: string;
    readonly message_id: string;
    readonly text: string;
    readonly partial: boolean;
  }
  | {
    readonly type: "reasoning_summary";
    readonly turn_id: string;
    readonly item_id: string;
    readonly text: string;
    // Older records predate the field; absent means unverified, never "true".
    readonly provider_summary?: boolean | undefined;
  }
  | {
    readonly type: "activity";
    readonly turn_id: string;
    readonly activity_id: string;
    readonly state: "started" | "completed" | "failed";
    readonly summary: string;
  }
  | { readonly type: "compaction" | "diagnostic"; readonly summary: string }
  | { readonly type: "tool_card"; readonly turn_id: string; readonly activity_id: string; readonly card: Card };

/** Options of {@link projectHistory}. */
export type ProjectionOptions = {
  /** Whether the file ended in a torn (LF-less) fragment that the records exclude. */
  readonly torn: boolean;
  /** Known secret values to redact, besides credential-shaped tokens. */
  readonly secrets: readonly string[];
  /**
   * Project `records` as the continuation of this complete snapshot: message
   * ordinals and the snapshot bounds carry on from it, and the result holds
   * only the new entries (with the totals of both). Valid when `records` are
   * whole turns appended after the snapshot's, which then cannot change any
   * earlier entry: every lookup is keyed by turn.
   */
  readonly after?: HistorySnapshot;
};

/** The outcome of {@link projectHistoryAsync}: also `operation_cancelled` once its signal is aborted. */
export type AsyncProjectionResult = ProjectionResult | { readonly ok: false; readonly code: typeof ErrorCode.operationCancelled };

/** Units of work (records, assistant chunks, entry parts) between two pauses at most, whatever the clock says. */
export const PROJECTION_YIELD_UNITS = 5_000;
// Records projected between two steps of the generator: each step costs a clock read in the async driver.
const RECORDS_PER_STEP = 64;

/** The text of the diagnostic entry standing in for a turn that never finished. */
export const INTERRUPTED_TURN_TEXT = "The turn was interrupted before it finished.";

/** The stored copies of one assistant message, reconciled once all records are read. */
type AssistantCopies = {
  slot: Slot;
  turnId: string;
  final: { text: string; partial: boolean } | null;
  chunks: Map<number, string>;
};

// Stored ids are only unique within their turn (a run numbers its own
// messages and activities), so every lookup is keyed by turn and id.
const key = (turnId: string, id: string): string => JSON.stringify([turnId, id]);

/**
 * Projects `records` (the intact prefix of a session file, in stored order)
 * into a snapshot, or `history_limit` when the projection would exceed
 * `history_snapshot_bytes` serialized (`JSON.stringify(entries)`) or
 * `history_snapshot_parts` parts. Runs to the end without pausing.
 */
export function projectHistory(records: readonly ProjectionRecord[], options: ProjectionOptions): ProjectionResult {
  const steps = projectSteps(records, options);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/**
 * {@link projectHistory} in short slices: it pauses on `cooperation` after
 * ~8 ms of work by its clock (and at least every
 * {@link PROJECTION_YIELD_UNITS} units), so projecting 100,000 records never
 * blocks the protocol loop for long. Stops with `operation_cancelled` at the
 * first pause after the signal is aborted.
 */
export async function projectHistoryAsync(
  records: readonly ProjectionRecord[],
  options: ProjectionOptions,
  cooperation: Cooperation,
): Promise<AsyncProjectionResult> {
  const slicer = new Slicer(cooperation, { count: PROJECTION_YIELD_UNITS, bytes: Infinity });
  const steps = projectSteps(records, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (slicer.tick(step.value) && await slicer.pause()) return { ok: false, code: ErrorCode.operationCancelled };
  }
}

/**
 * The projection as a generator: it yields the units of work done since its
 * last yield, so one core serves the synchronous and the sliced driver.
 */
function* projectSteps(records: readonly ProjectionRecord[], options: ProjectionOptions): Generator<number, ProjectionResult> {
  const slots: Slot[] = [];
  const assistants = new Map<string, AssistantCopies>();
  const summaries = new Map<string, Slot>();
  const activities = new Map<string, Slot>();
  const outcomes = new Map<string, string>();
  let openTurn: string | null = null;
  let interrupted = false;
  const interruption = (): void => {
    slots.push({ kind: "diagnostic", text: INTERRUPTED_TURN_TEXT, partial: true });
    interrupted = true;
  };

  // Turns that carried content: one with no recorded end never finished durably,
  // whether or not its start was recorded, so the projection cannot be complete.
  const contentTurns = new Set<string>();
  let seen = 0;
  for (const record of records) {
    if (++seen % RECORDS_PER_STEP === 0) yield RECORDS_PER_STEP;
    if ("turn_id" in record && record.type !== "turn_started" && record.type !== "turn_finished") {
      contentTurns.add(record.turn_id as string);
    }
    switch (record.type) {
      case "turn_started":
        // A new turn while another is open means the open one lost its end
        // (the process died mid-turn): it is interrupted here, not just at the tail.
        if (openTurn !== null && openTurn !== record.turn_id) interruption();
        openTurn = record.turn_id;
        break;
      case "turn_finished":
        outcomes.set(record.turn_id, record.outcome);
        if (openTurn === record.turn_id) openTurn = null;
        break;
      case "user_input":
        slots.push({ kind: "user", text: record.text, partial: false, turn: record.turn_id });
        break;
      case "assistant_chunk":
      case "assistant_message": {
        const id = key(record.turn_id, record.message_id);
        let copies = assistants.get(id);
        if (copies === undefined) {
          copies = { slot: { kind: "assistant", text: "", partial: false }, turnId: record.turn_id, final: null, chunks: new Map() };
          assistants.set(id, copies);
          slots.push(copies.slot);
        }
        if (record.type === "assistant_message") copies.final = { text: record.text, partial: record.partial };
        else copies.chunks.set(record.index, record.text);
        break;
      }
      case "reasoning_summary": {
        if (record.provider_summary !== true) break;
        const id = key(record.turn_id, record.item_id);
        const existing = summaries.get(id);
        if (existing !== undefined) existing.text = record.text;
        else {
          const slot: Slot = { kind: "reasoning_summary", text: record.text, partial: false };
          summaries.set(id, slot);
          slots.push(slot);
        }
        break;
      }
      case "activity": {
        const id = key(record.turn_id, record.activity_id);
        let slot = activities.get(id);
        if (slot === undefined) {
          slot = { kind: "activity", text: "", partial: false };
          activities.set(id, slot);
          slots.push(slot);
        }
        slot.text = record.summary;
        slot.partial = record.state === "started";
        break;
      }
      case "compaction":
      case "diagnostic":
        slots.push({ kind: record.type, text: record.summary, partial: false });
        break;
      case "tool_card": {
        // Attached to its own activity only (written after its last state): never by position.
        const slot = activities.get(key(record.turn_id, record.activity_id));
        if (slot !== undefined) slot.card = record.card;
        break;
      }
      default:
        break; // session, preferences, titles, internal prompts and usage never show; rewinds are applied before (rewind-fold.ts)
    }
  }
  const unfinished = [...contentTurns].some((turn) => !outcomes.has(turn));
  // A notice for an open turn stays where it is when a next turn starts; one for only a
  // torn tail or an endless legacy turn moves past the next turn's records or goes away.
  let tailNotice = false;
  if (openTurn !== null || options.torn || (unfinished && !interrupted)) {
    interruption();
    tailNotice = openTurn === null;
  }

  for (const copies of assistants.values()) {
    reconcile(copies, outcomes.get(copies.turnId) === "completed");
    yield 1 + copies.chunks.size;
  }
  return yield* chunkSlots(slots, options.secrets, { complete: !interrupted, tailNotice }, options.after ?? EMPTY_HISTORY);
}

/** Settles an assistant message on its one reconciled copy. */
function reconcile(copies: AssistantCopies, turnCompleted: boolean): void {
  if (copies.final !== null) {
    copies.slot.text = copies.final.text;
    copies.slot.partial = copies.final.partial || !turnCompleted;
    return;
  }
  // Legacy output without a final message: its chunks in index order. A gap
  // in the indices is a lost chunk, so the text cannot claim to be whole.
  const indices = [...copies.chunks.keys()].sort((a, b) => a - b);
  copies.slot.text = indices.map((index) => copies.chunks.get(index)).join("");
  const gap = indices.some((index, at) => index !== at);
  copies.slot.partial = gap || !turnCompleted;
}
