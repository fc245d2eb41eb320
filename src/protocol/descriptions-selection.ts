/**
 * Descriptions of the catalog and selection results (`model.catalog`,
 * `model.catalog.status`, `model.refresh`, `selection.set`) and of
 * `status.selection`, from the spec's catalog section and the negotiated
 * extensions. See `describe.ts` for why they are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import { DiagnosticCode, ErrorCode } from "./errors.ts";
import {
  CatalogChoiceSchema,
  ModelCatalogResultSchema,
  ModelCatalogStatusResultSchema,
  ModelRefreshResultSchema,
  ProviderCatalogStatusSchema,
  SelectionObjectSchema,
  SelectionSetResultSchema,
} from "./selection-results.ts";

const EFFORT_SUPPORT = "Whether the model's reasoning effort can be chosen: `supported`, `unsupported` or `unknown` (no capability information).";

/** Descriptions of the catalog and selection results. */
export const SELECTION_DESCRIPTIONS: Descriptions = new Map([
  describe(SelectionObjectSchema, "The current provider, model and reasoning effort, with the revision `selection.set` must send.", {
    revision: "The selection's revision; every attachment and every change gets a fresh one.",
    provider: "The selected provider; null when the name is unsafe to show.",
    model: "The selected model; null when the name is unsafe to show.",
    requested_effort: "The effort the session asks for (`default`: no explicit override), kept even when it no longer applies.",
    effective_effort: "The effort in effect after the backend's resolution; null when the model's effort is unsupported or unknown.",
    effort_support: EFFORT_SUPPORT,
    permitted_efforts: "The efforts this model accepts (`default` always among them).",
  }),
  describe(CatalogChoiceSchema, "One cached provider/model pair that settings enable.", {
    selection_id: "A stable opaque id of this provider/model pair (not of any credential).",
    provider: "The provider; submit it to `selection.set` exactly.",
    model: "The model; submit it to `selection.set` exactly.",
    provider_name: "The provider's display name; null when missing or unsafe.",
    model_name: "The model's display name; null when missing or unsafe.",
    availability: "`available` (locally admitted, not proven remotely) or `authentication_unavailable` (the provider's key is not configured).",
    effort_support: EFFORT_SUPPORT,
    permitted_efforts: "The efforts `selection.set` accepts with this choice.",
  }),
  describe(ModelCatalogResultSchema, "`model.catalog` result: one page of the cached choices settings enable; it never fetches.", {
    revision: "The catalog snapshot's revision: send it with `next_cursor`, and as `selection.set`'s `catalog_revision`.",
    choices: "This page's choices, ascending by provider, then model (UTF-8 byte order).",
    next_cursor: "The next page's cursor (send it with `revision`), or null on the last page.",
    complete: "True on the last page: every admitted cached choice was paged (not every model the provider offers remotely).",
    notices: "Advisory notice codes, such as `provider_catalog_unavailable` (a relevant provider has no usable cache).",
    source: "Always `cache_only`: the choices come from local caches.",
  }),
  describe(ProviderCatalogStatusSchema, "One admitted provider's catalog cache.", {
    provider: "The provider's name.",
    state: "The cache's state (docs/features/local-agent-extensions.md); fail closed on an unknown one.",
    models: "How many models the cache lists, when it is valid; else null.",
    refreshed_at: "When the cached list was fetched (UTC, ISO 8601); else null.",
    notices: "`provider_catalog_unavailable` or `catalog_entries_omitted_unsafe`, when they apply.",
  }),
  describe(ModelCatalogStatusResultSchema, "`model.catalog.status` result (negotiated): each admitted provider's cache, from local reads only.", {
    providers: "One entry per admitted provider, ascending by name.",
  }),
  describe(ModelRefreshResultSchema, "`model.refresh` result (negotiated): the provider's cache was replaced by its endpoint's current list.", {
    provider: "The refreshed provider.",
    refreshed: "Always true.",
    models: "How many models the cache now lists.",
    notices: "Advisory notice codes.",
  }),
  describe(SelectionSetResultSchema, "`selection.set` result: the selection is stored in the session and applies from the next turn.", {
    session_id: "The session the selection is stored in.",
    selection: "The new selection; `status` agrees.",
    catalog_revision: "The catalog revision the choice was validated against.",
    scope: "Always `session`: settings are unchanged.",
    durable: "Always true: the session's file holds the selection.",
    history_revision: `The history revision after the stored record (older revisions are stale); null when the history cannot be paged: reopen the session (a history over the snapshot budget still pages \`${ErrorCode.historyLimit}\`).`,
    notices: `Notice codes: \`selection_normalized\`, \`metadata_update_failed\`, \`${DiagnosticCode.historyUnavailable}\`.`,
  }),
]);
