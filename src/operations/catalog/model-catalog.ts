/**
 * `model.catalog`: cache-only pages of the admitted choices. A fresh request
 * scans the relevant providers' caches once, admits the choices (checking
 * every one, building none) and replaces the child's snapshot; a
 * continuation rescans the same caches and pages the snapshot only when the
 * fingerprint is unchanged. Each page builds the wire objects of its own
 * choices only. Nothing here fetches
 * models, refreshes a cache, generates, runs a tool or writes settings.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { OutputValue } from "../../protocol/frames.ts";
import type { ModelCatalogParams } from "../../protocol/selection-schemas.ts";
import { utf8ByteCount } from "../../util/utf8.ts";
import { choiceBytes } from "../../catalog/choice.ts";
import { admitChoices, choicesIn, type SelectionIdOf } from "../../catalog/choices.ts";
import type { StoreResult } from "../../store/sessions.ts";
import type { SelectionState } from "./selection-state.ts";
import type { CatalogContext } from "./catalog-context.ts";
import { type CatalogSnapshot, type CatalogSnapshots, decodeCursor, encodeCursor } from "./catalog-snapshot.ts";
import { hintFrom } from "./observe.ts";

/** What `model.catalog` works with. */
export interface CatalogDeps {
  readonly context: CatalogContext;
  readonly snapshots: CatalogSnapshots;
  readonly selection: SelectionState;
}

const STALE = { ok: false, code: ErrorCode.staleCatalog } as const;
// Room for the longest cursor the page might carry, so the byte check never undercounts.
const CURSOR_ROOM = "x".repeat(LIMITS.identifier_bytes);

/** One page of `snapshot` from `offset`: as many choices as `limit` and the page bytes allow. */
async function page(snapshot: CatalogSnapshot, offset: number, limit: number, selectionIdOf: SelectionIdOf): Promise<StoreResult> {
  const { count, notices } = snapshot.choices;
  const base = { revision: snapshot.revision, choices: [], next_cursor: CURSOR_ROOM, complete: false, notices, source: "cache_only" };
  let bytes = utf8ByteCount(JSON.stringify(base));
  const choices = choicesIn(snapshot.choices, offset, Math.min(count, offset + limit), selectionIdOf);
  let taken = 0;
  while (taken < choices.length) {
    const size = choiceBytes(choices[taken]!) + (taken > 0 ? 1 : 0);
    if (bytes + size > LIMITS.catalog_page_bytes) break;
    bytes += size;
    taken++;
  }
  if (taken === 0 && offset < count) return { ok: false, code: ErrorCode.catalogLimit };
  const end = offset + taken;
  const complete = end >= count;
  const result: OutputValue = {
    revision: snapshot.revision,
    choices: taken === choices.length ? choices : choices.slice(0, taken),
    next_cursor: complete ? null : await encodeCursor(snapshot.revision, end),
    complete,
    notices: [...notices],
    source: "cache_only",
  };
  return { ok: true, result };
}

/** A fresh snapshot of the relevant caches, installed as the child's one snapshot. */
export async function freshSnapshot(deps: CatalogDeps, signal: AbortSignal): Promise<{ ok: true; snapshot: CatalogSnapshot } | { ok: false; code: ErrorCode }> {
  const { context, snapshots, selection } = deps;
  // A fresh request replaces the previous revision whatever it finds, failure included.
  snapshots.invalidate();
  const providers = context.relevantProviders(selection.value.provider);
  const scan = await context.scan(providers, signal);
  if (!scan.ok) return scan;
  // Cheap over unchanged caches: what each cache admits is derived once per decoded file.
  const admitted = admitChoices(scan.providers, context.enabled);
  if (!admitted.ok) return admitted;
  if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
  selection.observe(hintFrom(scan, selection.value.provider, selection.value.model));
  const snapshot = snapshots.replace({ providers, fingerprint: scan.fingerprint, choices: admitted });
  return { ok: true, snapshot };
}

/**
 * Whether the snapshot `revision` names is current, valid and unchanged on
 * disk (one rescan); a detected change or a failed rescan invalidates it.
 */
export async function verifySnapshot(deps: CatalogDeps, revision: string, signal: AbortSignal): Promise<CatalogSnapshot | null> {
  const snapshot = deps.snapshots.valid(revision);
  if (snapshot === null) return null;
  const scan = await deps.context.scan(snapshot.providers, signal);
  if (signal.aborted) return null;
  if (!scan.ok || scan.fingerprint !== snapshot.fingerprint) {
    deps.snapshots.invalidate();
    return null;
  }
  return snapshot;
}

/** Handles `model.catalog`. */
export async function modelCatalog(deps: CatalogDeps, params: ModelCatalogParams, signal: AbortSignal): Promise<StoreResult> {
  const limit = params.limit ?? LIMITS.catalog_page_entries;
  const revision = params.revision ?? null;
  if (revision === null) {
    const fresh = await freshSnapshot(deps, signal);
    return fresh.ok ? await page(fresh.snapshot, 0, limit, deps.context.selectionIdOf) : fresh;
  }
  const current = deps.snapshots.valid(revision);
  if (current === null) return STALE;
  const offset = await decodeCursor(current, params.cursor!);
  if (offset === null) return STALE;
  const snapshot = await verifySnapshot(deps, revision, signal);
  if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
  return snapshot === null ? STALE : await page(snapshot, offset, limit, deps.context.selectionIdOf);
}
