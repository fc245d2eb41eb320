/**
 * `selection.set`: a deliberate, durable change of the attached session's
 * provider, model and effort. Everything is checked before anything is
 * written, in the spec's order: the attachment (`session_missing`,
 * `stale_session`), the selection revision (`stale_selection`), the catalog
 * revision and a first rescan (`stale_catalog`), the candidate against that
 * scan (`selection_invalid`, `provider_unavailable`, `effort_unsupported`),
 * then a second rescan right before the append. One `session_preferences`
 * record is appended (creating the file of a lazy handle, which makes it
 * durable), and only after that append is durable is the in-memory
 * selection replaced. A refusal or failure writes nothing and leaves the
 * selection and its revision as they were; settings are never written.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { Notice } from "../../protocol/notices.ts";
import type { EffortRequest, SelectionSetParams } from "../../protocol/selection-schemas.ts";
import type { Effort } from "../../policy/efforts.ts";
import { buildChoices, type Choice } from "../../catalog/choices.ts";
import { encodeRecord, type SessionPreferencesRecord } from "../../store/records.ts";
import type { SessionStore, StoreResult } from "../../store/sessions.ts";
import type { CatalogDeps } from "../catalog/model-catalog.ts";
import { hintFrom } from "../catalog/observe.ts";
import type { CatalogScan } from "../catalog/catalog-context.ts";
import type { SelectionValue } from "../catalog/selection-state.ts";

/** What `selection.set` works with. */
export interface SelectionDeps extends CatalogDeps {
  readonly store: SessionStore;
}

type Refusal = { readonly ok: false; readonly code: ErrorCode };
const refuse = (code: ErrorCode): Refusal => ({ ok: false, code });

/** The requested effort `request` asks for, given the one retained now. */
function requestedEffort(request: EffortRequest | undefined, previous: Effort): Effort {
  if (request === undefined || request.mode === "keep") return previous;
  return request.mode === "default" ? "default" : request.value;
}

/** A rescan of the snapshot's providers that must match its fingerprint; a mismatch invalidates the snapshot. */
async function rescan(deps: SelectionDeps, revision: string, signal: AbortSignal): Promise<CatalogScan | Refusal> {
  const snapshot = deps.snapshots.valid(revision);
  if (snapshot === null) return refuse(ErrorCode.staleCatalog);
  const scan = await deps.context.scan(snapshot.providers, signal);
  if (signal.aborted) return refuse(ErrorCode.operationCancelled);
  if (!scan.ok || scan.fingerprint !== snapshot.fingerprint) {
    deps.snapshots.invalidate();
    return refuse(ErrorCode.staleCatalog);
  }
  return scan;
}

/** The candidate choice from `scan`, admitted exactly as submitted, or the refusal. */
function candidate(
  deps: SelectionDeps,
  scan: CatalogScan & { ok: true },
  params: SelectionSetParams,
): { ok: true; choice: Choice } | Refusal {
  const built = buildChoices(scan.providers, deps.context.enabled, deps.context.selectionIdOf);
  if (!built.ok) return refuse(built.code);
  const choice = built.choices.find((entry) => entry.provider === params.provider && entry.model === params.model);
  if (choice === undefined) return refuse(ErrorCode.selectionInvalid);
  if (choice.availability !== "available") return refuse(ErrorCode.providerUnavailable);
  return { ok: true, choice };
}

/** Appends the preferences record; returns the new history revision (null: not pageable, or unreadable back), or the refusal. */
async function persist(store: SessionStore, record: SessionPreferencesRecord): Promise<{ ok: true; revision: string | null } | Refusal> {
  const encoded = encodeRecord(record);
  if (encoded === null || encoded.length > LIMITS.selection_append_bytes) return refuse(ErrorCode.selectionInvalid);
  // The store's turn journal is the one durable write path: it takes the leases, creates a lazy
  // session's file with its `session` record first, and refreshes the attachment afterwards.
  const begun = store.beginTurn();
  const appended = await begun.journal.appendInput([record]);
  if (!appended.ok) {
    await store.completeTurn(begun.journal, false);
    return refuse(appended.code === ErrorCode.sessionBusy ? ErrorCode.sessionBusy : ErrorCode.persistenceFailed);
  }
  // Null over the snapshot budget too, where the revision would name no page (each is `history_limit`).
  return { ok: true, revision: await store.completeTurn(begun.journal, true) };
}

/** Handles `selection.set`. */
export async function setSelection(deps: SelectionDeps, params: SelectionSetParams, signal: AbortSignal): Promise<StoreResult> {
  const { store, selection, context } = deps;
  const attached = store.turnRefusal(params.session_id);
  if (attached !== null) return refuse(attached);
  if (params.selection_revision !== selection.revision) return refuse(ErrorCode.staleSelection);
  const first = await rescan(deps, params.catalog_revision, signal);
  if (!first.ok) return first;
  const admitted = candidate(deps, first, params);
  if (!admitted.ok) return admitted;
  const choice = admitted.choice;
  const requested = requestedEffort(params.effort, selection.value.requested);
  if (!choice.permitted_efforts.includes(requested)) return refuse(ErrorCode.effortUnsupported);
  // Second validation, right before persistence: the caches must still be what the first one saw.
  const second = await rescan(deps, params.catalog_revision, signal);
  if (!second.ok) return second;
  if (signal.aborted) return refuse(ErrorCode.operationCancelled);

  const runtime = context.runtime;
  const record: SessionPreferencesRecord = {
    v: 1,
    type: "session_preferences",
    session_id: params.session_id,
    at: new Date(runtime.wallNow()).toISOString(),
    provider: choice.provider,
    model: choice.model,
    effort: requested,
  };
  const persisted = await persist(store, record);
  if (!persisted.ok) return persisted;
  const value: SelectionValue = {
    provider: choice.provider,
    model: choice.model,
    endpoint: context.endpoints.get(choice.provider)!,
    requested,
    hint: hintFrom(second, choice.provider, choice.model),
  };
  selection.replace(value);
  return {
    ok: true,
    result: {
      session_id: params.session_id,
      selection: selection.render(),
      catalog_revision: params.catalog_revision,
      scope: "session",
      durable: true,
      history_revision: persisted.revision,
      notices: persisted.revision === null ? [Notice.historyUnavailable] : [],
    },
  };
}
