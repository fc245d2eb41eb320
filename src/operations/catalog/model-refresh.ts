/**
 * `model.refresh` (negotiated): the one deliberate remote call of the
 * catalog. It fetches one provider's model list with that provider's normal
 * credentials, validates all of it, and only then replaces the cache
 * atomically. Right before the rename is its commit point, as `session.open`
 * has one before it replaces the attachment: cancellation is checked there
 * for the last time, and past it the refresh runs to its answer (a later
 * `operation.cancel` is `stale_operation`), since the cache it would report
 * as kept is being replaced. Any failure before it keeps the previous
 * cache. It never changes settings, enabled ids or saved preferences, and
 * every admitted refresh invalidates the catalog snapshot, because the files
 * a snapshot was built from are about to change.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { Notice } from "../../protocol/notices.ts";
import { isSafeDisplayName } from "../../util/redaction.ts";
import { encodeCache, endpointFingerprint } from "../../catalog/cache-format.ts";
import { writeCache } from "../../catalog/cache-write.ts";
import { fetchModelList } from "../../catalog/model-list.ts";
import type { StoreResult } from "../../store/sessions.ts";
import type { CatalogDeps } from "./model-catalog.ts";

/** Longest a whole listing (all pages) may take. */
export const REFRESH_DEADLINE_MS = 30_000;

/**
 * Handles `model.refresh` for `provider`; `commit` is called at the commit
 * point (see above), and `deadlineMs` bounds the remote part.
 */
export async function modelRefresh(
  deps: CatalogDeps,
  provider: string,
  signal: AbortSignal,
  commit: () => void,
  deadlineMs: number = REFRESH_DEADLINE_MS,
): Promise<StoreResult> {
  const { context, snapshots, selection } = deps;
  const endpoint = context.endpoints.get(provider);
  if (endpoint === undefined) return { ok: false, code: ErrorCode.providerUnavailable };
  if (context.endpoints.size > LIMITS.catalog_providers) return { ok: false, code: ErrorCode.catalogLimit };
  const apiKey = context.apiKey(endpoint);
  if (endpoint.apiKeyEnv !== null && apiKey === null) return { ok: false, code: ErrorCode.providerUnavailable };
  snapshots.invalidate();
  const listed = await fetchModelList({ runtime: context.runtime, endpoint, apiKey, signal, deadlineMs });
  if (!listed.ok) return listed;
  const bytes = encodeCache({
    provider,
    endpoint: await endpointFingerprint(endpoint.api, endpoint.baseUrl),
    refreshedAt: new Date(context.runtime.wallNow()).toISOString(),
    models: listed.models,
  });
  if (bytes.length > LIMITS.catalog_file_bytes) return { ok: false, code: ErrorCode.catalogUnavailable };
  if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
  const written = await writeCache(context.runtime, context.home, provider, bytes, () => {
    if (signal.aborted) return false;
    commit();
    return true;
  });
  if (!written.ok) return { ok: false, code: signal.aborted ? ErrorCode.operationCancelled : ErrorCode.persistenceFailed };
  // The refresh is itself an observation of the selected provider's cache.
  if (selection.value.provider === provider) {
    selection.observe(listed.models.find((model) => model.id === selection.value.model)?.reasoning ?? null);
  }
  const unsafe = listed.models.some((model) => !isSafeDisplayName(model.id));
  return {
    ok: true,
    result: { provider, refreshed: true, models: listed.models.length, notices: unsafe ? [Notice.catalogEntriesOmittedUnsafe] : [] },
  };
}
