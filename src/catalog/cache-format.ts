/**
 * The catalog cache file: one per provider at `$MC_HOME/catalog/<provider>.json`,
 * written only by `model.refresh` and read by every catalog observation.
 *
 * ```json
 * {"v":1,"provider":"openai","endpoint":"<64 hex>","refreshed_at":"2026-12-01T10:00:00.000Z",
 *  "models":[{"id":"gpt-5","name":null,"reasoning":null}]}
 * ```
 *
 * A model whose list said how many tokens its context holds carries
 * `"context_window":N` after `reasoning`, and a cache holding one is
 * written at `v: 2`; any other is still written at `v: 1`, exactly as
 * before, so a release that predates windows keeps reading those.
 *
 * `endpoint` fingerprints the provider's admitted `api` and `base_url`: a
 * list fetched from one server says nothing about another, so after the user
 * points a provider elsewhere its old cache reads as `endpoint_changed`
 * instead of offering models the new server may not have. Decoding is as
 * strict as the writer: the file is ours, so anything else is damage or a
 * newer format, refused as a whole.
 *
 * @module
 */

import * as v from "valibot";
import { PROVIDER_NAME_PATTERN } from "../protocol/identity.ts";
import { LIMITS } from "../protocol/limits.ts";
import { lengthPrefixed, sha256Hex } from "../util/digest.ts";
import { exactObject } from "../util/exact-object.ts";
import { hasLoneSurrogate, utf8ByteCount } from "../util/utf8.ts";
import type { ReasoningHint } from "../policy/effort-policy.ts";
import { isContextWindow } from "../config/compaction-settings.ts";

/** The newest cache format version this code reads; a cache is written at the oldest that holds it. */
export const CACHE_VERSION = 2;

/** One cached model. */
export interface CachedModel {
  readonly id: string;
  /** Display name the provider gave, or null. */
  readonly name: string | null;
  /** What the list said about reasoning controls. */
  readonly reasoning: ReasoningHint;
  /** Tokens the model's context holds, when the list said (format 2). */
  readonly contextWindow?: number;
}

/** A decoded cache file. */
export interface CacheFile {
  readonly provider: string;
  /** {@link endpointFingerprint} of the endpoint the list came from. */
  readonly endpoint: string;
  /** When the refresh fetched it, `toISOString` form. */
  readonly refreshedAt: string;
  readonly models: readonly CachedModel[];
}

/** Why cache bytes are not a usable cache. */
export type DecodeProblem =
  /** Not JSON, another format or version, another provider's file. */
  | "invalid"
  /** A model id or name longer than `catalog_string_bytes`: the spec fails the operation (`catalog_limit`). */
  | "overlong"
  /** More models than `catalog_models`. */
  | "too_many"
  /** The same model id twice (`catalog_unavailable`). */
  | "duplicate";

/** The outcome of {@link decodeCache}. */
export type DecodeResult = { readonly ok: true; readonly cache: CacheFile } | { readonly ok: false; readonly problem: DecodeProblem };

const INVALID: DecodeResult = Object.freeze({ ok: false, problem: "invalid" });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// `JSON.parse` builds the tree natively; what it tolerates (duplicate keys, whitespace, other
// escapes or number forms) cannot survive the comparison with the writer's own text, and
// what that comparison cannot see (a lone surrogate escape) is checked per string.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// The envelope goes through valibot; the up to 2,048 model entries are checked by hand
// (`modelOf`), which allocates nothing beyond the decoded model itself.
const CacheSchema = exactObject({
  v: v.picklist([1, CACHE_VERSION]),
  provider: v.pipe(v.string(), v.regex(PROVIDER_NAME_PATTERN)),
  endpoint: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  refreshed_at: v.pipe(v.string(), v.regex(ISO)),
  models: v.array(v.unknown()),
});

/** One stored model entry with the right field types, or null. Extra fields are refused by the text comparison; strings are bounded later, so an overlong id is told apart from damage. */
function modelOf(entry: unknown): CachedModel | null {
  if (typeof entry !== "object" || entry === null) return null;
  const { id, name, reasoning, context_window: window } = entry as Record<string, unknown>;
  if (typeof id !== "string" || id === "" || hasLoneSurrogate(id)) return null;
  if (name !== null && (typeof name !== "string" || hasLoneSurrogate(name))) return null;
  if (reasoning !== null && typeof reasoning !== "boolean") return null;
  if (window !== undefined && !isContextWindow(window)) return null;
  return { id, name, reasoning, ...(window === undefined ? {} : { contextWindow: window }) };
}

/** The JSON text the writer stores for `models`: each `{ id, name, reasoning }`, plus `context_window` when known. */
function cacheText(provider: string, endpoint: string, refreshedAt: string, models: readonly CachedModel[]): string {
  const entries = models.map((model) => ({
    id: model.id,
    name: model.name,
    reasoning: model.reasoning,
    ...(model.contextWindow === undefined ? {} : { context_window: model.contextWindow }),
  }));
  const version = models.some((model) => model.contextWindow !== undefined) ? 2 : 1;
  return JSON.stringify({ v: version, provider, endpoint, refreshed_at: refreshedAt, models: entries });
}

/** The fingerprint a cache of an endpoint with `api` at `baseUrl` carries. */
export async function endpointFingerprint(api: string, baseUrl: string): Promise<string> {
  return await sha256Hex(lengthPrefixed(["magi-code.catalog-endpoint.v1", api, baseUrl]));
}

/** Checks the model list's own bounds: count, string lengths, distinct ids. */
export function checkModels(models: readonly CachedModel[]): DecodeProblem | null {
  if (models.length > LIMITS.catalog_models) return "too_many";
  const ids = new Set<string>();
  for (let index = 0; index < models.length; index++) {
    const model = models[index]!;
    if (utf8ByteCount(model.id) > LIMITS.catalog_string_bytes) return "overlong";
    if (model.name !== null && utf8ByteCount(model.name) > LIMITS.catalog_string_bytes) return "overlong";
    if (ids.has(model.id)) return "duplicate";
    ids.add(model.id);
  }
  return null;
}

/**
 * Decodes the bytes of `provider`'s cache file. Only what {@link encodeCache}
 * writes is accepted: the text must be exactly the writer's for the decoded
 * content (so no duplicate key, unknown field, whitespace or other spelling
 * passes), with no lone surrogate in any string.
 */
export function decodeCache(bytes: Uint8Array, provider: string): DecodeResult {
  let text: string;
  let parsed: unknown;
  try {
    text = decoder.decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    return INVALID;
  }
  const checked = v.safeParse(CacheSchema, parsed);
  if (!checked.success || checked.output.provider !== provider) return INVALID;
  const output = checked.output;
  const models: CachedModel[] = [];
  for (let index = 0; index < output.models.length; index++) {
    const model = modelOf(output.models[index]);
    if (model === null) return INVALID;
    models.push(model);
  }
  const written = cacheText(output.provider, output.endpoint, output.refreshed_at, models);
  if (text.length !== written.length + 1 || !text.startsWith(written) || !text.endsWith("\n")) return INVALID;
  const problem = checkModels(models);
  if (problem !== null) return { ok: false, problem };
  return { ok: true, cache: { provider: output.provider, endpoint: output.endpoint, refreshedAt: output.refreshed_at, models } };
}

/** Encodes a cache for writing; the decoder reads back exactly `cache`. */
export function encodeCache(cache: CacheFile): Uint8Array {
  return new TextEncoder().encode(`${cacheText(cache.provider, cache.endpoint, cache.refreshedAt, cache.models)}\n`);
}
