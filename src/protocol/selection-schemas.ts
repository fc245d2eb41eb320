/**
 * Params schemas of the catalog and selection operations (`model.catalog`,
 * `model.catalog.status`, `model.refresh`, `selection.set`), apart from
 * `schemas.ts` because they form one family with its own rules: paired
 * revision/cursor, and the three effort request objects, where anything but
 * exactly those shapes is `invalid_params` (no null, no alias, no case
 * folding, no value on keep/default, no `set/default`).
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import type { Exact, Lit, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import { IDENTIFIER_PATTERN, PROVIDER_NAME_PATTERN, SESSION_ID_PATTERN } from "./identity.ts";
import { LIMITS } from "./limits.ts";
import { type PagedParams, pagedParams } from "./schemas.ts";

const OpaqueIdSchema: Pattern = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** `model.catalog` params: paged like discovery, up to `catalog_page_entries` per page. */
export const ModelCatalogParamsSchema: PagedParams = pagedParams(LIMITS.catalog_page_entries);

/** The output of {@link ModelCatalogParamsSchema}. */
export type ModelCatalogParams = v.InferOutput<typeof ModelCatalogParamsSchema>;

/** `model.refresh` params: exactly `{ provider }`, a provider name. */
export const ModelRefreshParamsSchema: Exact<{ provider: Pattern }> = exactObject({ provider: v.pipe(v.string(), v.regex(PROVIDER_NAME_PATTERN)) });

/** The output of {@link ModelRefreshParamsSchema}. */
export type ModelRefreshParams = v.InferOutput<typeof ModelRefreshParamsSchema>;

/**
 * A provider or model as `selection.set` submits it: 1-256 UTF-8 bytes, no
 * controls, well-formed, not shaped like a credential. The spec makes unsafe
 * strings `invalid_params`, and unsafe is what the catalog omits as
 * `catalog_entries_omitted_unsafe`, so no string refused here is ever a choice.
 */
const NameSchema: v.SchemaWithPipe<
  readonly [Str, v.MinLengthAction<string, 1, undefined>, v.MaxBytesAction<string, typeof LIMITS.name_bytes, undefined>, v.CheckAction<string, undefined>]
> = v.pipe(v.string(), v.minLength(1), v.maxBytes(LIMITS.name_bytes), v.check(isSafeDisplayName));

/** The explicit efforts `{ "mode": "set" }` takes; `default` is a mode of its own. */
export const SET_EFFORTS: readonly ["low", "medium", "high", "xhigh", "max"] = ["low", "medium", "high", "xhigh", "max"] as const;

/** An effort request: exactly one of the three objects. */
export const EffortRequestSchema: v.UnionSchema<
  [Exact<{ mode: Lit<"keep"> }>, Exact<{ mode: Lit<"default"> }>, Exact<{ mode: Lit<"set">; value: OneOf<typeof SET_EFFORTS> }>],
  undefined
> = v.union([
  exactObject({ mode: v.literal("keep") }),
  exactObject({ mode: v.literal("default") }),
  exactObject({ mode: v.literal("set"), value: v.picklist(SET_EFFORTS) }),
]);

/** The output of {@link EffortRequestSchema}. */
export type EffortRequest = v.InferOutput<typeof EffortRequestSchema>;

/** `selection.set` params. */
export const SelectionSetParamsSchema: Exact<{
  session_id: Pattern;
  selection_revision: Pattern;
  catalog_revision: Pattern;
  provider: typeof NameSchema;
  model: typeof NameSchema;
  effort: v.ExactOptionalSchema<typeof EffortRequestSchema, undefined>;
}> = exactObject({
  session_id: v.pipe(v.string(), v.regex(SESSION_ID_PATTERN)),
  selection_revision: OpaqueIdSchema,
  catalog_revision: OpaqueIdSchema,
  provider: NameSchema,
  model: NameSchema,
  effort: v.exactOptional(EffortRequestSchema),
});

/** The output of {@link SelectionSetParamsSchema}. */
export type SelectionSetParams = v.InferOutput<typeof SelectionSetParamsSchema>;
