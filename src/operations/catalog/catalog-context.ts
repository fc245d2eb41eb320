/**
 * What every catalog and selection operation of one child works from: the
 * admitted startup snapshot's endpoints, enabled choices and credentials
 * (one configuration snapshot per child, as the spec requires), and the
 * scan targets derived from them. Local readiness is decided exactly as at
 * startup: a provider is available when it needs no key or has one.
 *
 * @module
 */

import type { Runtime } from "../../host/runtime.ts";
import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { Credentials } from "../../config/credentials.ts";
import { type EnabledChoice, enabledChoices } from "../../config/catalog-settings.ts";
import { apiKeyFor, type Endpoint, resolveEndpoints } from "../../config/providers.ts";
import type { StartupSnapshot } from "../../admission/startup.ts";
import { compareUtf8 } from "../../util/utf8-order.ts";
import { endpointFingerprint } from "../../catalog/cache-format.ts";
import { selectionId, type SelectionIdOf } from "../../catalog/choice.ts";
import { type DecodeMemo, scanCatalog, type ScanResult, type ScanTarget } from "../../catalog/scan.ts";

/** A scan target that remembers its endpoint's dialect, for the effort policy. */
export interface CatalogTarget extends ScanTarget {
  readonly api: string;
}

/** A scan whose providers carry their dialect. */
export type CatalogScan = ScanResult<CatalogTarget>;

/** The catalog side of one child's admitted configuration. */
export class CatalogContext {
  readonly runtime: Runtime;
  readonly home: string;
  /** Every admitted provider (built-ins and configured endpoints). */
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  /** The admitted `providers.catalog.enabled` list, split. */
  readonly enabled: readonly EnabledChoice[];
  readonly #enabledProviders: readonly string[];
  readonly #credentials: Credentials;

  /** Derives the context from the startup snapshot. */
  constructor(runtime: Runtime, snapshot: StartupSnapshot) {
    this.runtime = runtime;
    this.home = snapshot.home;
    this.endpoints = resolveEndpoints(snapshot.settings);
    this.enabled = enabledChoices(snapshot.settings.providers?.catalog);
    // Derived once: a page would otherwise walk all 2,048 enabled ids to find these few names.
    this.#enabledProviders = [...new Set(this.enabled.map((choice) => choice.provider))];
    this.#credentials = snapshot.credentials;
  }

  readonly #selectionIds = new Map<string, string>();
  // At most one decoded cache per admitted provider (32).
  readonly #decoded: DecodeMemo<CatalogTarget> = new Map();
  // One target per provider while its readiness is unchanged: endpoints are fixed for the
  // child's lifetime, and an unchanged target lets a rescan reuse the provider's last result.
  readonly #targets = new Map<string, CatalogTarget>();

  async #target(name: string, endpoint: Endpoint): Promise<CatalogTarget> {
    const authAvailable = this.authAvailable(endpoint);
    let target = this.#targets.get(name);
    if (target === undefined || target.authAvailable !== authAvailable) {
      const fingerprint = target?.endpoint ?? await endpointFingerprint(endpoint.api, endpoint.baseUrl);
      target = { name, api: endpoint.api, endpoint: fingerprint, authAvailable };
      this.#targets.set(name, target);
    }
    return target;
  }

  /** The memoized selection id of `provider`/`model` (bounded: at most one per cached model seen). */
  readonly selectionIdOf: SelectionIdOf = (provider, model) => {
    const key = `${provider}/${model}`;
    let id = this.#selectionIds.get(key);
    if (id === undefined) {
      id = selectionId(() => this.runtime.createSha256(), provider, model);
      // Caches change only by refresh; a child that refreshes a lot drops old ids rather than growing.
      if (this.#selectionIds.size >= 4 * LIMITS.catalog_models) this.#selectionIds.clear();
      this.#selectionIds.set(key, id);
    }
    return id;
  };

  /** The key for `endpoint`, or null; never logged or returned to a client. */
  apiKey(endpoint: Endpoint): string | null {
    return apiKeyFor(endpoint, (name) => this.runtime.env(name), this.#credentials);
  }

  /** Whether `endpoint` is locally ready: it needs no key, or one is there. */
  authAvailable(endpoint: Endpoint): boolean {
    return endpoint.apiKeyEnv === null || this.apiKey(endpoint) !== null;
  }

  /** Every admitted provider name in ascending UTF-8 byte order. */
  allProviders(): string[] {
    return [...this.endpoints.keys()].sort(compareUtf8);
  }

  /** Providers a catalog page depends on: those with an enabled id, and the selected one. */
  relevantProviders(selected: string | null): string[] {
    const names = new Set(this.#enabledProviders);
    if (selected !== null) names.add(selected);
    return [...names].filter((name) => this.endpoints.has(name)).sort(compareUtf8);
  }

  /** Scans the caches of `names` (admitted providers) under the catalog bounds. */
  async scan(names: readonly string[], signal: AbortSignal): Promise<CatalogScan> {
    // The bound counts admitted providers, built-ins included, whichever subset one scan reads.
    if (this.endpoints.size > LIMITS.catalog_providers) return { ok: false, code: ErrorCode.catalogLimit };
    const targets: CatalogTarget[] = [];
    for (const name of names) {
      const endpoint = this.endpoints.get(name);
      if (endpoint !== undefined) targets.push(await this.#target(name, endpoint));
    }
    return await scanCatalog(this.runtime, this.home, targets, signal, this.#decoded);
  }
}
