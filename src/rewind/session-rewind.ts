/**
 * `session.rewind.preview` and `session.rewind` (negotiated) over the
 * attached session: both check the revision as `history.page` does, find
 * the turn of the named user message, and read the file to plan what goes;
 * the rewind then appends one `rewind` record through the store's turn
 * journal (the one durable write path) and reads the history back, so the
 * next page and the next turn's replay both start without the dropped turns.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { MethodParams } from "../protocol/methods.ts";
import type { MethodResult } from "../protocol/results.ts";
import type { RewindRecord } from "../store/rewind-record.ts";
import { applyRewinds } from "../store/rewind-fold.ts";
import { readSessionFile } from "../store/session-file.ts";
import type { SessionStore, StoreResult } from "../store/sessions.ts";
import type { Checkpoint, Checkpoints } from "./checkpoints.ts";
import { keptFiles, previewFiles, restoreFiles } from "./file-restore.ts";
import { withDiffs, withoutDiffs } from "./preview-diffs.ts";
import { messagesFrom, planRewind, type RewindPlan } from "./rewind-plan.ts";

/** What a rewind works with. */
export interface RewindContext {
  readonly runtime: Runtime;
  readonly store: SessionStore;
  readonly checkpoints: Checkpoints;
  /** The child's known secrets, redacted from the preview's diffs. */
  readonly secrets: readonly string[];
}

type Target = { readonly ok: true; readonly turn: string; readonly plan: RewindPlan; readonly messages: number; readonly checkpoints: readonly Checkpoint[] };

/**
 * The turn `message_id` opens in the attached history at `revision`, and
 * the plan of dropping it; or the refusal, `checkpoints_evicted` when
 * `restores` needs checkpoints of a dropped turn that was evicted.
 */
async function target(context: RewindContext, params: MethodParams<"session.rewind.preview">, restores: boolean, signal: AbortSignal): Promise<Target | { ok: false; code: ErrorCode }> {
  const at = await context.store.snapshotAt(params.session_id, params.revision);
  if (!at.ok) return at;
  // Only a user message opens a turn; any other id, or one of no entry, names nothing to rewind to.
  const turn = at.snapshot.userTurns.get(params.message_id);
  if (turn === undefined) return { ok: false, code: ErrorCode.invalidParams };
  const runtime = context.runtime;
  const read = await readSessionFile(runtime.fs, at.path, params.session_id, {
    signal,
    now: () => runtime.monotonicNow(),
    yieldEvery: () => new Promise<void>((resolve) => runtime.setTimer(0, () => resolve())),
    maxBytes: LIMITS.stored_history_bytes,
    maxLines: LIMITS.stored_history_lines,
    createSha256: () => runtime.createSha256(),
  });
  if (!read.ok) return read;
  const plan = planRewind(applyRewinds(read.records), turn);
  // The snapshot named the turn, so a file without it changed since: the revision is stale.
  if (plan === null) return { ok: false, code: ErrorCode.staleRevision };
  const checkpoints = await context.checkpoints.of(params.session_id, plan.turns);
  // Rewinding the conversation alone needs no checkpoint; putting files back from part of them would restore half a turn.
  if (checkpoints === "evicted" && restores) return { ok: false, code: ErrorCode.checkpointsEvicted };
  return { ok: true, turn, plan, messages: messagesFrom(at.snapshot.entries, params.message_id), checkpoints: checkpoints === "evicted" ? [] : checkpoints };
}

function dropped(params: MethodParams<"session.rewind.preview">, found: Target) {
  return { session_id: params.session_id, message_id: params.message_id, dropped_turns: found.plan.turns.size, dropped_messages: found.messages, unrestorable: [...found.plan.unrestorable] };
}

/** `session.rewind.preview`: what rewinding to `message_id` would drop; writes nothing. */
export async function previewRewind(
  context: RewindContext,
  params: MethodParams<"session.rewind.preview">,
  signal: AbortSignal,
): Promise<StoreResult<MethodResult<"session.rewind.preview">>> {
  const found = await target(context, params, true, signal);
  if (!found.ok) return found;
  const previewed = await previewFiles(context.runtime, context.checkpoints, found.checkpoints);
  const bare = { ...dropped(params, found), files: withoutDiffs(previewed), revision: params.revision };
  return { ok: true, result: { ...bare, files: withDiffs(previewed, context.secrets, bare) } };
}

/**
 * `session.rewind`: the preview's checks again, then one appended `rewind`
 * record, then, with `restore_files`, each restorable file put back.
 * `commit` is called before the append: from then on cancelling would not
 * undo it. A refused append (another writer, a full disk) leaves the
 * history and every file as they were. The record goes first so that a
 * child killed in between leaves the conversation rewound and each file
 * either restored or as the dropped turns left it (each is replaced
 * atomically), never the files restored under a conversation that still
 * shows the turns that wrote them.
 */
export async function applyRewind(
  context: RewindContext,
  params: MethodParams<"session.rewind">,
  signal: AbortSignal,
  commit: () => void,
): Promise<StoreResult<MethodResult<"session.rewind">>> {
  const found = await target(context, params, params.restore_files, signal);
  if (!found.ok) return found;
  if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
  commit();
  const { store, runtime } = context;
  const record: RewindRecord = { v: 4, type: "rewind", session_id: params.session_id, at: new Date(runtime.wallNow()).toISOString(), from_turn: found.turn };
  const begun = store.beginTurn();
  const appended = await begun.journal.appendInput([record]);
  if (!appended.ok) {
    await store.completeTurn(begun.journal, false);
    return { ok: false, code: appended.code === ErrorCode.sessionBusy ? ErrorCode.sessionBusy : ErrorCode.persistenceFailed };
  }
  const revision = await store.completeTurn(begun.journal, true);
  const files = params.restore_files ? await restoreFiles(runtime, context.checkpoints, found.checkpoints) : keptFiles(found.checkpoints);
  return { ok: true, result: { ...dropped(params, found), files, revision } };
}
