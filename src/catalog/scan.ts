/**
 * One bounded catalog scan: the cache files of the given providers read and
 * decoded under the spec's per-scan bounds, with a fingerprint of what was
 * seen. `catalog_providers` bounds how many providers a scan may cover,
 * `catalog_file_bytes` each file, `catalog_scan_bytes` their sum,
 * `catalog_models` the models of all files before any exclusion and
 * `catalog_scan_ms` the scan's cooperative deadline, checked after each file
 * (a blocked filesystem call cannot be interrupted). Exceeding any of them is
 * `catalog_limit` for the whole scan: there is no partial result.
 *
 * The fingerprint covers each provider's name, state, local readiness and
 * file content (its length and SHA-256), so a continuation that rescans can
 * tell whether anything a page or a selection depends on changed.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { lengthPrefixed } from "../util/digest.ts";
import { type CacheFile, decodeCache } from "./cache-format.ts";
import { readCache } from "./cache-read.ts";

/** What a scan reads for one provider. */
export interface ScanTarget {
  readonly name: string;
  /** Fingerprint of the provider's admitted endpoint (`endpointFingerprint`). */
  readonly endpoint: string;
  /** Whether local authentication is available (a key, or none needed). */
  readonly authAvailable: boolean;
}

/**
 * A provider's cache as a scan found it. `ready` and `empty` carry the cache;
 * `missing`, `invalid` and `endpoint_changed` mean the provider contributes
 * no choices; `unreadable` (unsafe or failing), `too_large`, `overlong` and
 * `duplicate` are problems the operation itself must report.
 */
export type CacheState =
  | "ready"
  | "empty"
  | "missing"
  | "invalid"
  | "endpoint_changed"
  | "unreadable"
  | "too_large"
  | "overlong"
  | "duplicate";

/** One provider's scan result. */
export interface ProviderScan extends ScanTarget {
  readonly state: CacheState;
  /** The decoded cache when `state` is `ready` or `empty`. */
  readonly cache: CacheFile | null;
}

/** The outcome of {@link scanCatalog} over targets of type `T`. */
export type ScanResult<T extends ScanTarget = ScanTarget> =
  | { readonly ok: true; readonly providers: readonly (ProviderScan & T)[]; readonly fingerprint: string }
  | { readonly ok: false; readonly code: typeof ErrorCode.catalogLimit | typeof ErrorCode.operationCancelled };

const LIMIT = { ok: false, code: ErrorCode.catalogLimit } as const;
const CANCELLED = { ok: false, code: ErrorCode.operationCancelled } as const;

function stateOf(read: Awaited<ReturnType<typeof readCache>>, target: ScanTarget): { state: CacheState; cache: CacheFile | null } {
  if (read.kind !== "bytes") return { state: read.kind, cache: null };
  const decoded = decodeCache(read.bytes, target.name);
  if (!decoded.ok) return { state: decoded.problem === "too_many" ? "too_large" : decoded.problem, cache: null };
  if (decoded.cache.endpoint !== target.endpoint) return { state: "endpoint_changed", cache: null };
  return { state: decoded.cache.models.length === 0 ? "empty" : "ready", cache: decoded.cache };
}

/**
 * The last scan result of each provider, with what it was made of: the
 * target object and the file's digest (or the read's kind when there were
 * no bytes). A rescan that finds both unchanged reuses the result as is, so
 * an unchanged file is neither parsed nor given new objects: every page
 * rescans, and re-decoding 2,048 models each time cost most of a page's
 * allocations.
 */
export type DecodeMemo<T extends ScanTarget = ScanTarget> = Map<string, { readonly target: T; readonly content: string; readonly scan: ProviderScan & T }>;

/** Scans `targets` (in the order given) under `home`; honours `signal` between files. */
export async function scanCatalog<T extends ScanTarget>(
  runtime: Runtime,
  home: string,
  targets: readonly T[],
  signal: AbortSignal,
  memo: DecodeMemo<T> = new Map(),
): Promise<ScanResult<T>> {
  if (targets.length > LIMITS.catalog_providers) return LIMIT;
  const started = runtime.monotonicNow();
  const hash = runtime.createSha256();
  const providers: (ProviderScan & T)[] = [];
  let bytes = 0;
  let models = 0;
  for (const target of targets) {
    if (signal.aborted) return CANCELLED;
    const read = await readCache(runtime.fs, home, target.name);
    if (signal.aborted) return CANCELLED;
    if (runtime.monotonicNow() - started > LIMITS.catalog_scan_ms) return LIMIT;
    let content: string = read.kind;
    if (read.kind === "bytes") {
      bytes += read.bytes.length;
      if (bytes > LIMITS.catalog_scan_bytes) return LIMIT;
      const digest = runtime.createSha256();
      digest.update(read.bytes);
      content = digest.digest();
    }
    const known = memo.get(target.name);
    let scan: ProviderScan & T;
    if (known !== undefined && known.target === target && known.content === content) scan = known.scan;
    else {
      scan = { ...target, ...stateOf(read, target) };
      memo.set(target.name, { target, content, scan });
    }
    models += scan.cache?.models.length ?? 0;
    if (models > LIMITS.catalog_models) return LIMIT;
    const length = read.kind === "bytes" ? read.bytes.length : -1;
    // The content digest stands for the bytes: a change to either is a change to it.
    hash.update(lengthPrefixed([target.name, target.endpoint, scan.state, String(target.authAvailable), String(length), content]));
    providers.push(scan);
  }
  return { ok: true, providers, fingerprint: hash.digest() };
}
