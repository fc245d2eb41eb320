/**
 * The `agent.compaction` settings: whether a run compacts its conversation
 * automatically, and at what fill of the model's context window
 * (docs/settings.md, docs/features/runner.md "Compaction").
 *
 * The default threshold, 0.8, leaves a fifth of the window for what the
 * runner cannot measure before sending: the reply (Anthropic and most chat
 * servers count `max_tokens` against the window), the step's own additions
 * (estimated from bytes, which can under-count), and the summary the
 * compaction request itself must produce within the same window. Below 0.5
 * a compaction could not free enough for the summary and the kept turn to
 * sit under the threshold again; above 0.95 the estimate's error alone
 * crosses the window before compaction starts.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";

/** The fill of the window at which a run compacts when settings name none. */
export const DEFAULT_COMPACTION_THRESHOLD = 0.8;
/** The smallest threshold accepted. */
export const MIN_COMPACTION_THRESHOLD = 0.5;
/** The largest threshold accepted. */
export const MAX_COMPACTION_THRESHOLD = 0.95;

/** The `agent.compaction` section of one settings file. */
export const CompactionSettingsSchema = v.pipe(
  exactObject({
    enabled: v.exactOptional(v.pipe(
      v.boolean(),
      v.description("Compact the conversation automatically when the context fills up or the provider says it is too long; default true."),
    )),
    threshold: v.exactOptional(v.pipe(
      v.number(),
      v.minValue(MIN_COMPACTION_THRESHOLD),
      v.maxValue(MAX_COMPACTION_THRESHOLD),
      v.description(
        `Fill of the model's context window at which a run compacts before its next request, ${MIN_COMPACTION_THRESHOLD}-${MAX_COMPACTION_THRESHOLD}; default ${DEFAULT_COMPACTION_THRESHOLD}.`,
      ),
    )),
  }),
  v.description("Automatic compaction of long conversations."),
);

/** A validated `agent.compaction` section, or the merge of two. */
export interface CompactionSettings {
  readonly enabled?: boolean;
  readonly threshold?: number;
}

/** What a run does: both fields decided. */
export interface CompactionPolicy {
  readonly enabled: boolean;
  readonly threshold: number;
}

/**
 * The `compaction` field of two merged `agent` sections: both files'
 * sections merged field by field, the project winning; nothing when
 * neither file has one.
 */
export function mergeCompaction(
  global: { readonly compaction?: CompactionSettings } | undefined,
  project: { readonly compaction?: CompactionSettings } | undefined,
): { readonly compaction?: CompactionSettings } {
  const [g, p] = [global?.compaction, project?.compaction];
  return g === undefined && p === undefined ? {} : { compaction: { ...g, ...p } };
}

/** The policy `settings` describe, defaults filled in. */
export function compactionPolicy(settings: CompactionSettings | undefined): CompactionPolicy {
  return { enabled: settings?.enabled ?? true, threshold: settings?.threshold ?? DEFAULT_COMPACTION_THRESHOLD };
}
