/**
 * Turns use the current selection. A run's configuration is the startup
 * configuration with the selection's endpoint, model, key and effort put in;
 * and before any provider work the selected provider's cache is observed
 * once more: if the effort semantics changed since the client last saw
 * status, the accepted turn fails with `stale_selection` before its input is
 * appended (no `input.persisted`), and the refreshed selection (a new
 * revision) is exposed only after the run's terminal event is out. Nothing is
 * retried; the client decides.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import type { RunConfig } from "../../runner/run-config.ts";
import type { CatalogContext } from "../catalog/catalog-context.ts";
import { observeHint } from "../catalog/observe.ts";
import type { SelectionState } from "../catalog/selection-state.ts";

/** `base` with the current selection of `selection` applied. */
export function selectionRunConfig(base: RunConfig, selection: SelectionState, context: CatalogContext): RunConfig {
  const value = selection.value;
  return {
    ...base,
    endpoint: value.endpoint,
    model: value.model,
    effort: selection.effortToSend(),
    apiKey: context.apiKey(value.endpoint),
  };
}

/** A refusal of an accepted turn, and what to do once its terminal event is out. */
export interface TurnRefusal {
  readonly code: ErrorCode;
  readonly after: () => void;
}

/** The turn admission observation: a refusal when effort semantics changed, else null. */
export async function observeForTurn(selection: SelectionState, context: CatalogContext, signal: AbortSignal): Promise<TurnRefusal | null> {
  const { provider, model } = selection.value;
  const hint = await observeHint(context, provider, model, signal);
  // A cancelled observation read nothing trustworthy; the run itself reports the cancellation.
  if (signal.aborted) return null;
  if (!selection.changes(hint)) {
    selection.observe(hint);
    return null;
  }
  return { code: ErrorCode.staleSelection, after: () => selection.observe(hint) };
}
