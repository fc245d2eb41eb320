/**
 * The selection side of an attachment. `session.create` starts from the
 * startup selection; `session.open` restores the session's saved
 * provider/model/effort (its last `session_preferences` record) through the
 * same admission `selection.set` uses: an enabled, cached, safe choice of an
 * admitted provider with local authentication. Nothing is written. A saved
 * choice that is not admitted now keeps the startup provider and model with
 * the saved requested effort (`saved_selection_unavailable`); a restored one
 * whose saved effort the model no longer permits keeps that request, runs
 * without an override, and says so (`saved_selection_notice`). Every
 * successful attachment gets a fresh selection revision.
 *
 * @module
 */

import { Notice } from "../../protocol/notices.ts";
import { buildChoices } from "../../catalog/choices.ts";
import type { SessionPreferencesRecord } from "../../store/records.ts";
import type { StoreResult } from "../../store/sessions.ts";
import { hintFrom, observeHint } from "../catalog/observe.ts";
import type { SelectionDeps } from "./selection-set.ts";
import { policyOf, type SelectionValue } from "../catalog/selection-state.ts";

/** The restored value for `saved` and its notice, or null when the saved choice is not admitted now. */
async function restore(deps: SelectionDeps, saved: SessionPreferencesRecord, signal: AbortSignal): Promise<SelectionValue | null> {
  const { context } = deps;
  const endpoint = context.endpoints.get(saved.provider);
  if (endpoint === undefined) return null;
  const scan = await context.scan([saved.provider], signal);
  if (!scan.ok) return null;
  const built = buildChoices(scan.providers, context.enabled, context.selectionIdOf);
  if (!built.ok) return null;
  const choice = built.choices.find((entry) => entry.provider === saved.provider && entry.model === saved.model);
  if (choice === undefined || choice.availability !== "available") return null;
  return { provider: saved.provider, model: saved.model, endpoint, requested: saved.effort, hint: hintFrom(scan, saved.provider, saved.model) };
}

/**
 * Replaces the selection after the successful attachment `attached`
 * (a `session.create` or `session.open` result), adding the restoration
 * notice to its `notices`.
 */
export async function attachSelection(deps: SelectionDeps, attached: StoreResult, signal: AbortSignal): Promise<StoreResult> {
  if (!attached.ok) return attached;
  const { selection, context, store } = deps;
  const startup = selection.startup;
  const saved = store.preferences;
  const notices: string[] = [];
  let value: SelectionValue;
  if (saved === null) {
    value = { ...startup, hint: await observeHint(context, startup.provider, startup.model, signal) };
  } else {
    const restored = await restore(deps, saved, signal);
    if (restored === null) {
      value = { ...startup, requested: saved.effort, hint: await observeHint(context, startup.provider, startup.model, signal) };
      notices.push(Notice.savedSelectionUnavailable);
    } else {
      value = restored;
      // A saved request the model no longer permits stays requested; the turn then sends no override.
      if (!policyOf(value).permitted.includes(value.requested)) notices.push(Notice.savedSelectionNotice);
    }
  }
  selection.replace(value);
  const result = attached.result as { readonly notices?: readonly string[] };
  return { ok: true, result: { ...attached.result as object, notices: [...(result.notices ?? []), ...notices] } };
}
