/**
 * Turns use the current selection. A run's configuration is the startup
 * configuration with the selection's endpoint, model, key and effort put in;
 * and before any provider work the selected provider's cache is observed
 * once more: if the effort semantics changed since the client last saw
 * status, the accepted turn fails with `stale_selection` before its input is
 * appended (no `input.persisted`), and the refreshed selection (a new
 * revision) is exposed only after the run's terminal event is out. Nothing is
 * retried; the client decides. The same read says how many tokens the
 * model's context holds, when the provider's list said (`config/compaction-settings.ts`).
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { contextWindow } from "../../config/compaction-settings.ts";
import type { RunConfig } from "../../runner/run-config.ts";
import type { CatalogContext } from "../catalog/catalog-context.ts";
import { observeModel } from "../catalog/observe.ts";
import type { SelectionState } from "../catalog/selection-state.ts";

/** `base` with the current selection of `selection` applied; `cachedWindow` is what the turn's observation read. */
export function selectionRunConfig(base: RunConfig, selection: SelectionState, context: CatalogContext, cachedWindow: number | null): RunConfig {
  const value = selection.value;
  return {
    ...base,
    endpoint: value.endpoint,
    model: value.model,
    effort: selection.effortToSend(),
    apiKey: context.apiKey(value.endpoint),
    contextWindow: contextWindow({ provider: value.provider, model: value.model, cached: cachedWindow, configured: value.endpoint.contextWindow ?? null }),
  };
}

/** A refusal of an accepted turn, and what to do once its terminal event is out. */
export interface TurnRefusal {
  readonly code: ErrorCode;
  readonly after: () => void;
}

/** What the turn admission observed: a refusal when effort semantics changed, and the cached context window. */
export interface TurnObservation {
  readonly refusal: TurnRefusal | null;
  readonly cachedWindow: number | null;
}

/** The turn admission observation. */
export async function observeForTurn(selection: SelectionState, context: CatalogContext, signal: AbortSignal): Promise<TurnObservation> {
  const { provider, model } = selection.value;
  const cached = await observeModel(context, provider, model, signal);
  const hint = cached?.reasoning ?? null;
  // A cancelled observation read nothing trustworthy; the run itself reports the cancellation.
  if (signal.aborted) return { refusal: null, cachedWindow: null };
  const cachedWindow = cached?.contextWindow ?? null;
  if (!selection.changes(hint)) {
    selection.observe(hint);
    return { refusal: null, cachedWindow };
  }
  return { refusal: { code: ErrorCode.staleSelection, after: () => selection.observe(hint) }, cachedWindow };
}
