/**
 * Catalog observations of the current selection: what the selected
 * provider's cache says about the selected model's reasoning controls, the
 * one cache-derived input of the effort policy. Pages, attachments and turn
 * admission observe it; an unreadable or missing cache observes "nothing
 * said" (`null`), which is what the built-in table then decides on.
 *
 * @module
 */

import type { ReasoningHint } from "../../policy/effort-policy.ts";
import type { CachedModel } from "../../catalog/cache-format.ts";
import type { CatalogContext, CatalogScan } from "./catalog-context.ts";

/** The entry `scan` holds for `provider`/`model`, or null when it has none. */
function modelFrom(scan: CatalogScan, provider: string, model: string): CachedModel | null {
  if (!scan.ok) return null;
  const found = scan.providers.find((entry) => entry.name === provider);
  if (found === undefined || found.cache === null) return null;
  return found.cache.models.find((entry) => entry.id === model) ?? null;
}

/** The hint `scan` holds for `provider`/`model`, or null when it has none. */
export function hintFrom(scan: CatalogScan, provider: string, model: string): ReasoningHint {
  return modelFrom(scan, provider, model)?.reasoning ?? null;
}

/** Reads just `provider`'s cache (one bounded file) and returns what it says of `model`, or null. */
export async function observeModel(context: CatalogContext, provider: string, model: string, signal: AbortSignal): Promise<CachedModel | null> {
  return modelFrom(await context.scan([provider], signal), provider, model);
}

/** Reads just `provider`'s cache (one bounded file) and returns the hint for `model`. */
export async function observeHint(context: CatalogContext, provider: string, model: string, signal: AbortSignal): Promise<ReasoningHint> {
  return (await observeModel(context, provider, model, signal))?.reasoning ?? null;
}
