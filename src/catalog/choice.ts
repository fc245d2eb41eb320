/**
 * One `model.catalog` choice: its wire shape, its stable `selection_id`, and
 * its serialized size counted without serializing it. A catalog sizes every
 * admitted choice against `catalog_snapshot_bytes` but builds only the ones
 * a page returns, so the size comes from the fields, and a property test
 * holds it to `JSON.stringify`.
 *
 * @module
 */

import type { Sha256 } from "../host/runtime.ts";
import { lengthPrefixed } from "../util/digest.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import { jsonStringBytes } from "../util/utf8.ts";
import { type EffortPolicy, effortPolicy } from "../policy/effort-policy.ts";
import type { Effort } from "../policy/efforts.ts";
import type { CachedModel } from "./cache-format.ts";

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

/** Computes selection ids; a context memoizes them, since a tuple's id never changes. */
export type SelectionIdOf = (provider: string, model: string) => string;

/** Display names of the built-in providers; configured endpoints have none (null on the wire). */
const PROVIDER_NAMES: Readonly<Record<string, string>> = { openai: "OpenAI", anthropic: "Anthropic", ollama: "Ollama" };

/** The wire `provider_name` of `provider`. */
export function providerName(provider: string): string | null {
  return Object.hasOwn(PROVIDER_NAMES, provider) ? PROVIDER_NAMES[provider]! : null;
}

/** The wire `model_name` of a cached display name: missing or unsafe names are null. */
export function modelName(name: string | null): string | null {
  return name !== null && isSafeDisplayName(name) ? name : null;
}

/**
 * The stable opaque id of a provider/model tuple: the hex SHA-256 of
 * `magi-code.selection.v1`, provider and model, length-prefixed; 64 ASCII
 * bytes with no credential in it. Synchronous (the runtime's incremental
 * hash): a WebCrypto promise each cost a page most of its time.
 */
export function selectionId(createSha256: () => Sha256, provider: string, model: string): string {
  const hash = createSha256();
  hash.update(lengthPrefixed(["magi-code.selection.v1", provider, model]));
  return hash.digest();
}

/** Builds the wire choice of `provider`'s cached `model` (served over `api`), locally `available` or not. */
export function choiceOf(provider: string, api: string, model: CachedModel, available: boolean, selectionIdOf: SelectionIdOf): Choice {
  const policy = effortPolicy(api, model.id, model.reasoning);
  return {
    selection_id: selectionIdOf(provider, model.id),
    provider,
    model: model.id,
    provider_name: providerName(provider),
    model_name: modelName(model.name),
    availability: available ? "available" : "authentication_unavailable",
    effort_support: policy.support,
    permitted_efforts: policy.permitted,
  };
}

// Every key, colon, comma and bracket of a choice: the field order is fixed by `choiceOf`.
const SKELETON_BYTES =
  '{"selection_id":,"provider":,"model":,"provider_name":,"model_name":,"availability":,"effort_support":,"permitted_efforts":[]}'.length;
/** A selection id is 64 hex digits, quoted. */
const SELECTION_ID_BYTES = 66;

const nullable = (text: string | null): number => text === null ? 4 : jsonStringBytes(text);

/**
 * The serialized bytes of a choice less its `availability` value, the one
 * part that depends on local readiness rather than on the cache.
 */
export function cachedChoiceBytes(provider: string, model: string, name: string | null, support: EffortPolicy["support"], permitted: readonly Effort[]): number {
  let bytes = SKELETON_BYTES + SELECTION_ID_BYTES + jsonStringBytes(provider) + jsonStringBytes(model) + nullable(providerName(provider)) + nullable(name);
  bytes += jsonStringBytes(support) + Math.max(0, permitted.length - 1);
  // Indexed loops here and below: an interpreted `for…of` allocates a result object per step.
  for (let index = 0; index < permitted.length; index++) bytes += jsonStringBytes(permitted[index]!);
  return bytes;
}

/** The UTF-8 length of `JSON.stringify(choice)`. */
export function choiceBytes(choice: Choice): number {
  const { provider, model, model_name, effort_support, permitted_efforts, availability } = choice;
  return cachedChoiceBytes(provider, model, model_name, effort_support, permitted_efforts) + jsonStringBytes(availability);
}
