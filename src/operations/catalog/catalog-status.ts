/**
 * `model.catalog.status` (negotiated): one entry per admitted provider, in
 * ascending UTF-8 byte order, saying whether its cache can serve choices and
 * why not. Local reads only, under the same scan bounds as `model.catalog`;
 * it neither fetches nor changes the catalog snapshot or the selection.
 *
 * States, a closed set: `ready` (cached models, authentication available),
 * `empty` (a valid cache listing no model), `missing` (never refreshed),
 * `invalid` (damaged, another format, or over a catalog bound),
 * `endpoint_changed` (fetched from an endpoint the provider no longer
 * names), `unreadable` (unsafe file or failing read) and
 * `authentication_unavailable` (a usable cache, but no key for the provider).
 *
 * @module
 */

import { Notice } from "../../protocol/notices.ts";
import type { OutputValue } from "../../protocol/frames.ts";
import { isSafeDisplayName } from "../../util/redaction.ts";
import type { ProviderScan } from "../../catalog/scan.ts";
import type { StoreResult } from "../../store/sessions.ts";
import type { CatalogContext } from "./catalog-context.ts";

/** The documented states of a provider's catalog. */
export const CATALOG_STATES = ["ready", "empty", "missing", "invalid", "endpoint_changed", "unreadable", "authentication_unavailable"] as const;
/** One provider catalog state. */
export type CatalogState = typeof CATALOG_STATES[number];

function stateOf(scan: ProviderScan): CatalogState {
  switch (scan.state) {
    case "ready":
    case "empty":
      return scan.authAvailable ? scan.state : "authentication_unavailable";
    case "too_large":
    case "overlong":
    case "duplicate":
      return "invalid";
    default:
      return scan.state;
  }
}

/** Handles `model.catalog.status`. */
export async function catalogStatus(context: CatalogContext, selected: string, signal: AbortSignal): Promise<StoreResult> {
  const scan = await context.scan(context.allProviders(), signal);
  if (!scan.ok) return scan;
  const relevant = new Set(context.relevantProviders(selected));
  const providers: OutputValue[] = [];
  for (const entry of scan.providers) {
    if (!isSafeDisplayName(entry.name)) continue;
    const state = stateOf(entry);
    const notices: string[] = [];
    if (relevant.has(entry.name) && state !== "ready" && state !== "authentication_unavailable") notices.push(Notice.providerCatalogUnavailable);
    if (entry.cache?.models.some((model) => !isSafeDisplayName(model.id))) notices.push(Notice.catalogEntriesOmittedUnsafe);
    providers.push({
      provider: entry.name,
      state,
      models: entry.cache === null ? null : entry.cache.models.length,
      refreshed_at: entry.cache === null ? null : entry.cache.refreshedAt,
      notices,
    });
  }
  return { ok: true, result: { providers } };
}
