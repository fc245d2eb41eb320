/**
 * The startup selection's cached reasoning hint, read once when startup
 * decides readiness: a local, bounded read of one cache file (never a
 * fetch), so the first `status` already shows the effort semantics later
 * catalog observations would find. Anything unreadable reads as "nothing
 * said" and never fails startup.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { ReasoningHint } from "../policy/effort-policy.ts";
import { decodeCache, endpointFingerprint } from "./cache-format.ts";
import { readCache } from "./cache-read.ts";

/** The hint `provider`'s cache under `home` holds for `model`, when it was fetched from the endpoint `api` at `baseUrl`. */
export async function cachedHint(runtime: Runtime, home: string, endpoint: { readonly name: string; readonly api: string; readonly baseUrl: string }, model: string): Promise<ReasoningHint> {
  const read = await readCache(runtime.fs, home, endpoint.name);
  if (read.kind !== "bytes") return null;
  const decoded = decodeCache(read.bytes, endpoint.name);
  if (!decoded.ok || decoded.cache.endpoint !== await endpointFingerprint(endpoint.api, endpoint.baseUrl)) return null;
  return decoded.cache.models.find((entry) => entry.id === model)?.reasoning ?? null;
}
