/**
 * Which of one provider's cached models are catalog choices: the enabled,
 * display-safe ones, as indices into the cache in ascending UTF-8 byte order
 * of their ids, with whether an enabled model was omitted as unsafe and what
 * the choices weigh serialized (less their availability value, the one part
 * that depends on local readiness).
 *
 * This depends only on the decoded cache, the provider's dialect and the
 * child's enabled list, so it is derived once per decoded cache and kept
 * beside it (a scan reuses the decoded object while the file is unchanged):
 * a fresh page over unchanged caches redoes none of it, and a first page
 * allocates one index per provider instead of one object per choice.
 *
 * @module
 */

import { effortPolicy } from "../policy/effort-policy.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import { compareUtf8 } from "../util/utf8-order.ts";
import type { EnabledChoice } from "../config/catalog-settings.ts";
import type { CacheFile } from "./cache-format.ts";
import { cachedChoiceBytes, modelName } from "./choice.ts";

/** A provider's admitted models in one cache. */
export interface ProviderModels {
  /** Indices into the cache's models, in choice order. */
  readonly order: readonly number[];
  /** Whether an enabled model was left out because its id (or the provider's name) is unsafe to show. */
  readonly unsafe: boolean;
  /** The serialized bytes of these choices, each less its availability value, commas excluded. */
  readonly bytes: number;
}

const NONE: ProviderModels = Object.freeze({ order: Object.freeze([]), unsafe: false, bytes: 0 });

// Keyed weakly by the decoded cache, which lives as long as its file is unchanged.
const derived = new WeakMap<CacheFile, { readonly enabled: readonly EnabledChoice[]; readonly api: string; readonly models: ProviderModels | null }>();

/** The models `enabled` names for `provider`, or null for none. Built per derivation and dropped: a retained index would be a third copy of the enabled ids. */
function wantedOf(enabled: readonly EnabledChoice[], provider: string): Set<string> | null {
  let wanted: Set<string> | null = null;
  for (let index = 0; index < enabled.length; index++) {
    const choice = enabled[index]!;
    if (choice.provider === provider) (wanted ??= new Set()).add(choice.model);
  }
  return wanted;
}

function derive(cache: CacheFile, api: string, wanted: ReadonlySet<string>): ProviderModels | null {
  const provider = cache.provider;
  const models = cache.models;
  const providerSafe = isSafeDisplayName(provider);
  const order: number[] = [];
  let unsafe = false;
  let bytes = 0;
  for (let index = 0; index < models.length; index++) {
    const model = models[index]!;
    if (!wanted.has(model.id)) continue;
    if (!providerSafe || !isSafeDisplayName(model.id)) {
      unsafe = true;
      continue;
    }
    order.push(index);
    const policy = effortPolicy(api, model.id, model.reasoning);
    bytes += cachedChoiceBytes(provider, model.id, modelName(model.name), policy.support, policy.permitted);
  }
  order.sort((a, b) => compareUtf8(models[a]!.id, models[b]!.id));
  for (let index = 1; index < order.length; index++) {
    if (models[order[index - 1]!]!.id === models[order[index]!]!.id) return null;
  }
  return { order, unsafe, bytes };
}

/**
 * The admitted models of `cache` (a provider served over `api`) under the
 * `enabled` list, or null when two of them are the same choice
 * (`catalog_unavailable`).
 */
export function providerModels(cache: CacheFile, api: string, enabled: readonly EnabledChoice[]): ProviderModels | null {
  const known = derived.get(cache);
  if (known !== undefined && known.enabled === enabled && known.api === api) return known.models;
  const wanted = wantedOf(enabled, cache.provider);
  const models = wanted === null ? NONE : derive(cache, api, wanted);
  derived.set(cache, { enabled, api, models });
  return models;
}
