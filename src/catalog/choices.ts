/**
 * The catalog's choices, from one scan: every cached model of a provider
 * whose `"<provider>/<model>"` the admitted settings enable, in ascending
 * provider-then-model UTF-8 byte order, with its stable `selection_id`, local
 * availability and effort policy. Enabled ids without a cached model
 * (retired, or never refreshed) are not choices; cached models that are not
 * enabled are not either. Relevant providers (an enabled id, or the current
 * selection) whose cache cannot serve choices add one bounded notice; an
 * unreadable or unsafe relevant cache, or a duplicate, fails the whole
 * operation rather than silently shrinking the list.
 *
 * Admitting the choices ({@link admitChoices}) checks all of that and the
 * snapshot byte bound over every choice, but builds none: the result is one
 * index per provider. Wire choices are built only for the range a page
 * returns ({@link choicesIn}), so a 2,048-choice catalog builds 100 per page.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { Notice } from "../protocol/notices.ts";
import { compareUtf8 } from "../util/utf8-order.ts";
import { jsonStringBytes } from "../util/utf8.ts";
import type { EnabledChoice } from "../config/catalog-settings.ts";
import { type Choice, choiceOf, type SelectionIdOf } from "./choice.ts";
import { type ProviderModels, providerModels } from "./provider-models.ts";
import type { ProviderScan } from "./scan.ts";

export type { Choice, SelectionIdOf } from "./choice.ts";

/** A scanned provider with its endpoint's dialect, which the effort policy needs. */
export type DialectScan = ProviderScan & { readonly api: string };

/** One provider's run of consecutive choices. */
export interface ChoiceSegment {
  readonly scan: DialectScan;
  readonly models: ProviderModels;
  /** The index of its first choice in the whole list. */
  readonly start: number;
}

/** The admitted choices of one scan, in order, without their wire objects. */
export interface AdmittedChoices {
  readonly segments: readonly ChoiceSegment[];
  /** How many choices there are. */
  readonly count: number;
  readonly notices: readonly string[];
}

type Failure = { readonly ok: false; readonly code: typeof ErrorCode.catalogLimit | typeof ErrorCode.catalogUnavailable };

/** The outcome of {@link admitChoices}. */
export type AdmitResult = ({ readonly ok: true } & AdmittedChoices) | Failure;

/** The outcome of {@link buildChoices}. */
export type ChoicesResult = { readonly ok: true; readonly choices: readonly Choice[]; readonly notices: readonly string[] } | Failure;

/** Whether a scanned state lets the provider contribute choices, or which code fails the operation. */
export function stateProblem(scan: ProviderScan): "notice" | "ok" | Failure["code"] {
  switch (scan.state) {
    case "ready":
      return "ok";
    case "unreadable":
    case "duplicate":
      return ErrorCode.catalogUnavailable;
    case "too_large":
    case "overlong":
      return ErrorCode.catalogLimit;
    default:
      return "notice";
  }
}

/**
 * Admits the choices of `scans` (the relevant providers), only `enabled`
 * ids. Fails with `catalog_limit` when the serialized choices would exceed
 * `catalog_snapshot_bytes`.
 */
export function admitChoices(scans: readonly DialectScan[], enabled: readonly EnabledChoice[]): AdmitResult {
  const notices = new Set<string>();
  const admitted: { scan: DialectScan; models: ProviderModels }[] = [];
  let count = 0;
  let bytes = 2;
  for (const scan of scans) {
    const problem = stateProblem(scan);
    if (problem === "notice") notices.add(Notice.providerCatalogUnavailable);
    if (problem !== "ok") {
      if (problem === "notice") continue;
      return { ok: false, code: problem };
    }
    const models = providerModels(scan.cache!, scan.api, enabled);
    if (models === null) return { ok: false, code: ErrorCode.catalogUnavailable };
    if (models.unsafe) notices.add(Notice.catalogEntriesOmittedUnsafe);
    if (models.order.length === 0) continue;
    admitted.push({ scan, models });
    count += models.order.length;
    bytes += models.bytes + models.order.length * jsonStringBytes(scan.authAvailable ? "available" : "authentication_unavailable");
  }
  // One comma between consecutive choices.
  if (bytes + Math.max(0, count - 1) > LIMITS.catalog_snapshot_bytes) return { ok: false, code: ErrorCode.catalogLimit };
  admitted.sort((a, b) => compareUtf8(a.scan.name, b.scan.name));
  const segments: ChoiceSegment[] = [];
  let start = 0;
  for (const { scan, models } of admitted) {
    if (segments.length > 0 && segments[segments.length - 1]!.scan.name === scan.name) return { ok: false, code: ErrorCode.catalogUnavailable };
    segments.push({ scan, models, start });
    start += models.order.length;
  }
  return { ok: true, segments, count, notices: [...notices] };
}

/** The wire choices `from` (inclusive) `to` (exclusive) of `admitted`. */
export function choicesIn(admitted: AdmittedChoices, from: number, to: number, selectionIdOf: SelectionIdOf): Choice[] {
  const choices: Choice[] = [];
  for (const { scan, models, start } of admitted.segments) {
    const end = start + models.order.length;
    if (end <= from) continue;
    if (start >= to) break;
    const cached = scan.cache!.models;
    for (let index = Math.max(from, start); index < Math.min(to, end); index++) {
      choices.push(choiceOf(scan.name, scan.api, cached[models.order[index - start]!]!, scan.authAvailable, selectionIdOf));
    }
  }
  return choices;
}

/** Every admitted choice of `scans`, built (see {@link admitChoices}). */
export function buildChoices(scans: readonly DialectScan[], enabled: readonly EnabledChoice[], selectionIdOf: SelectionIdOf): ChoicesResult {
  const admitted = admitChoices(scans, enabled);
  if (!admitted.ok) return admitted;
  return { ok: true, choices: choicesIn(admitted, 0, admitted.count, selectionIdOf), notices: admitted.notices };
}
