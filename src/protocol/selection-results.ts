/**
 * Result schemas of the catalog and selection operations (`model.catalog`,
 * `model.catalog.status`, `model.refresh`, `selection.set`) and of
 * `status.selection`, kept apart from `results.ts` for size. The same rules
 * hold: open objects (a client may ignore unknown result fields), closed
 * enums (unknown enum semantics fail closed).
 *
 * @module
 */

import * as v from "valibot";
import { EFFORTS } from "../policy/efforts.ts";
import type { Bool, Count, List, Lit, Nullable, Obj, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { CountSchema, list } from "./schema-parts.ts";
import { OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";

/** An effort as the wire spells it, `default` included. */
export const EffortSchema: OneOf<typeof EFFORTS> = v.picklist(EFFORTS);

/** Whether a model's effort can be chosen. */
export const EffortSupportSchema: OneOf<["supported", "unsupported", "unknown"]> = v.picklist(["supported", "unsupported", "unknown"]);

/** `status.selection` and `selection.set`'s `selection`: the current selection with its revision. */
export const SelectionObjectSchema: Obj<{
  revision: Pattern;
  provider: Nullable<Str>;
  model: Nullable<Str>;
  requested_effort: typeof EffortSchema;
  effective_effort: Nullable<typeof EffortSchema>;
  effort_support: typeof EffortSupportSchema;
  permitted_efforts: List<typeof EffortSchema>;
}> = v.object({
  revision: OpaqueIdSchema,
  provider: v.nullable(v.string()),
  model: v.nullable(v.string()),
  requested_effort: EffortSchema,
  effective_effort: v.nullable(EffortSchema),
  effort_support: EffortSupportSchema,
  permitted_efforts: list(EffortSchema),
});

/** One `model.catalog` choice. */
export const CatalogChoiceSchema: Obj<{
  selection_id: Pattern;
  provider: Str;
  model: Str;
  provider_name: Nullable<Str>;
  model_name: Nullable<Str>;
  availability: OneOf<["available", "authentication_unavailable"]>;
  effort_support: typeof EffortSupportSchema;
  permitted_efforts: List<typeof EffortSchema>;
}> = v.object({
  selection_id: OpaqueIdSchema,
  provider: v.string(),
  model: v.string(),
  provider_name: v.nullable(v.string()),
  model_name: v.nullable(v.string()),
  availability: v.picklist(["available", "authentication_unavailable"]),
  effort_support: EffortSupportSchema,
  permitted_efforts: list(EffortSchema),
});

/** `model.catalog`'s result: one page of cached choices. */
export const ModelCatalogResultSchema: Obj<{
  revision: Pattern;
  choices: List<typeof CatalogChoiceSchema>;
  next_cursor: Nullable<Pattern>;
  complete: Bool;
  notices: List<Str>;
  source: Lit<"cache_only">;
}> = v.object({
  revision: OpaqueIdSchema,
  choices: list(CatalogChoiceSchema),
  next_cursor: v.nullable(OpaqueIdSchema),
  complete: v.boolean(),
  notices: list(v.string()),
  source: v.literal("cache_only"),
});

/** One provider of `model.catalog.status`. */
export const ProviderCatalogStatusSchema: Obj<{
  provider: Str;
  state: OneOf<["ready", "empty", "missing", "invalid", "endpoint_changed", "unreadable", "authentication_unavailable"]>;
  models: Nullable<Count>;
  refreshed_at: Nullable<Str>;
  notices: List<Str>;
}> = v.object({
  provider: v.string(),
  state: v.picklist(["ready", "empty", "missing", "invalid", "endpoint_changed", "unreadable", "authentication_unavailable"]),
  models: v.nullable(CountSchema),
  refreshed_at: v.nullable(v.string()),
  notices: list(v.string()),
});

/** `model.catalog.status`'s result. */
export const ModelCatalogStatusResultSchema: Obj<{ providers: List<typeof ProviderCatalogStatusSchema> }> = v.object({
  providers: list(ProviderCatalogStatusSchema),
});

/** `model.refresh`'s result. */
export const ModelRefreshResultSchema: Obj<{ provider: Str; refreshed: Lit<true>; models: Count; notices: List<Str> }> = v.object({
  provider: v.string(),
  refreshed: v.literal(true),
  models: CountSchema,
  notices: list(v.string()),
});

/** `selection.set`'s result: durable only after the preferences append. */
export const SelectionSetResultSchema: Obj<{
  session_id: Pattern;
  selection: typeof SelectionObjectSchema;
  catalog_revision: Pattern;
  scope: Lit<"session">;
  durable: Lit<true>;
  history_revision: Nullable<Pattern>;
  notices: List<Str>;
}> = v.object({
  session_id: SessionIdSchema,
  selection: SelectionObjectSchema,
  catalog_revision: OpaqueIdSchema,
  scope: v.literal("session"),
  durable: v.literal(true),
  history_revision: v.nullable(OpaqueIdSchema),
  notices: list(v.string()),
});
