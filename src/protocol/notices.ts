/**
 * The fixed notice strings of the catalog and selection operations
 * (`notices` arrays of `model.catalog`, `model.catalog.status`,
 * `model.refresh`, `selection.set` and `session.open`). Notices are bounded
 * fixed values, never text built from a cache, a provider or a path, so
 * every one is spelled here once.
 *
 * @module
 */

import { DiagnosticCode } from "./errors.ts";

/** The catalog and selection notices. */
export const Notice = {
  /** A relevant provider's cache is missing, invalid, empty or for another endpoint. */
  providerCatalogUnavailable: "provider_catalog_unavailable",
  /** A cached choice was left out because its identifier is secret-like or control-bearing. */
  catalogEntriesOmittedUnsafe: "catalog_entries_omitted_unsafe",
  /** `session.open` kept the startup selection: the saved one is not admitted now. */
  savedSelectionUnavailable: "saved_selection_unavailable",
  /** `session.open` restored the saved selection with an adjustment (its effort no longer applies). */
  savedSelectionNotice: "saved_selection_notice",
  /** `selection.set` is durable but the history cannot be paged: unreadable back (reopen) or over the snapshot budget. */
  historyUnavailable: DiagnosticCode.historyUnavailable,
} as const;

/** One notice. */
export type Notice = typeof Notice[keyof typeof Notice];
