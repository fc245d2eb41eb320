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
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { Notice } from "../protocol/notices.ts";
import type { Sha256 } from "../host/runtime.ts";
import { lengthPrefixed } from "../util/digest.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import { compareUtf8 } from "../util/utf8-order.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import { effortPolicy } from "../policy/effort-policy.ts";
import type { Effort } from "../policy/efforts.ts";
import type { EnabledChoice } from "../config/catalog-settings.ts";
import type { ProviderScan } from "./scan.ts";

/** One `model.catalog` choice, exactly as the wire carries it. */
export interface Choice {
  readonly [key: string]: string | null | readonly string[];
  readonly selection_id: string;
  readonly provider: string;
  readonly model: string;
  readonly provider_name: string | null;
  readonly model_name: string | null;
  readonly availability: "available" | "authentication_unavailable";
  readonly effort_support: "supported" | "unsupported" | "unknown";
  readonly permitted_efforts: readonly Effort[];
}

/** The outcome of {@link buildChoices}. */
export type ChoicesResult =
  | { readonly ok: true; readonly choices: readonly Choice[]; readonly notices: readonly string[] }
  | { readonly ok: false; readonly code: typeof ErrorCode.catalogLimit | typeof ErrorCode.catalogUnavailable };

/** Display names of the built-in providers; configured endpoints have none (null on the wire). */
const PROVIDER_NAMES: Readonly<Record<string, string>> = { openai: "OpenAI", anthropic: "Anthropic", ollama: "Ollama" };

/** Computes selection ids; a context memoizes them, since a tuple's id never changes. */
export type SelectionIdOf = (provider: string, model: string) => string;

/**
 * The stable opaque id of a provider/model tuple: the hex SHA-256 of
 * `magi-code.selection.v1`, provider and model, length-prefixed; 64 ASCII
 * bytes with no credential in it. Synchronous (the runtime's incremental
 * hash): a full catalog computes 2,048 of them, and a WebCrypto promise each
 * cost a page most of its time.
 */
export function selectionId(createSha256: () => Sha256, provider: string, model: string): string {
  const hash = createSha256();
  hash.update(lengthPrefixed(["magi-code.selection.v1", provider, model]));
  return hash.digest();
}

/** Whether a scanned state lets the provider contribute choices, or which code fails the operation. */
export function stateProblem(scan: ProviderScan): "notice" | "ok" | typeof ErrorCode.catalogLimit | typeof ErrorCode.catalogUnavailable {
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
 * Builds the choices of `scans` (the relevant providers, each with its
 * endpoint `api`), admitting only `enabled` ids, with ids from `selectionIdOf`. Fails with `catalog_limit`
 * when the serialized choices exceed `catalog_snapshot_bytes`.
 */
export function buildChoices(
  scans: readonly (ProviderScan & { readonly api: string })[],
  enabled: readonly EnabledChoice[],
  selectionIdOf: SelectionIdOf,
): ChoicesResult {
  const wanted = new Map<string, Set<string>>();
  for (const choice of enabled) {
    if (!wanted.has(choice.provider)) wanted.set(choice.provider, new Set());
    wanted.get(choice.provider)!.add(choice.model);
  }
  const notices = new Set<string>();
  const choices: Choice[] = [];
  for (const scan of scans) {
    const problem = stateProblem(scan);
    if (problem === "notice") notices.add(Notice.providerCatalogUnavailable);
    if (problem !== "ok") {
      if (problem === "notice") continue;
      return { ok: false, code: problem };
    }
    const models = wanted.get(scan.name);
    if (models === undefined) continue;
    for (const model of scan.cache!.models) {
      if (!models.has(model.id)) continue;
      if (!isSafeDisplayName(scan.name) || !isSafeDisplayName(model.id)) {
        notices.add(Notice.catalogEntriesOmittedUnsafe);
        continue;
      }
      const policy = effortPolicy(scan.api, model.id, model.reasoning);
      choices.push({
        selection_id: selectionIdOf(scan.name, model.id),
        provider: scan.name,
        model: model.id,
        provider_name: Object.hasOwn(PROVIDER_NAMES, scan.name) ? PROVIDER_NAMES[scan.name]! : null,
        model_name: model.name !== null && isSafeDisplayName(model.name) ? model.name : null,
        availability: scan.authAvailable ? "available" : "authentication_unavailable",
        effort_support: policy.support,
        permitted_efforts: policy.permitted,
      });
    }
  }
  choices.sort((a, b) => compareUtf8(a.provider, b.provider) || compareUtf8(a.model, b.model));
  let bytes = 2;
  for (let index = 0; index < choices.length; index++) {
    if (index > 0 && choices[index - 1]!.provider === choices[index]!.provider && choices[index - 1]!.model === choices[index]!.model) {
      return { ok: false, code: ErrorCode.catalogUnavailable };
    }
    bytes += utf8ByteCount(JSON.stringify(choices[index])) + (index > 0 ? 1 : 0);
    if (bytes > LIMITS.catalog_snapshot_bytes) return { ok: false, code: ErrorCode.catalogLimit };
  }
  return { ok: true, choices, notices: [...notices] };
}
