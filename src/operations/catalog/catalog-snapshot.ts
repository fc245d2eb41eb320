/**
 * The one catalog snapshot of a child. A fresh `model.catalog` replaces it
 * (even when nothing changed, so a client always works from the revision it
 * was last given); continuations page it after a rescan shows the same
 * fingerprint. Any detected change, an unreadable or over-limit rescan, or a
 * refresh invalidates it for good: restoring the old files cannot revive a
 * revision, because the invalid flag is never cleared, only replaced.
 *
 * Revisions and cursors are opaque, child-scoped and at most 64 bytes:
 * `c<generation>-<32 hex>` (a SHA-256 of a random per-child scope and the
 * fingerprint, so two children over the same caches never issue each other's
 * revisions) and `p<offset>-<24 hex>`, the cursor's tag a hash of revision
 * and offset so a cursor of another revision or a tampered one is refused.
 *
 * @module
 */

import { lengthPrefixed, sha256Hex } from "../../util/digest.ts";
import type { AdmittedChoices } from "../../catalog/choices.ts";
import type { Runtime } from "../../host/runtime.ts";

/** One catalog snapshot. */
export interface CatalogSnapshot {
  readonly revision: string;
  /** The providers the snapshot scanned, in scan order; continuations rescan exactly these. */
  readonly providers: readonly string[];
  readonly fingerprint: string;
  /** The admitted choices; a page builds the wire objects of its own range only. */
  readonly choices: AdmittedChoices;
}

/** Holds the child's current snapshot and whether it is still valid. */
export class CatalogSnapshots {
  readonly #runtime: Runtime;
  readonly #scope: string;
  #current: CatalogSnapshot | null = null;
  #valid = false;
  #generation = 0;

  /** Scopes every revision it issues to this child (the spec scopes all ephemeral identifiers to the instance). */
  constructor(runtime: Runtime) {
    this.#runtime = runtime;
    this.#scope = runtime.randomUUID();
  }

  /** Installs a fresh snapshot with a new revision, replacing (and so invalidating) the previous one. */
  replace(snapshot: Omit<CatalogSnapshot, "revision">): CatalogSnapshot {
    // The generation makes every snapshot's revision new in this child; the scope keeps it out of every other child.
    const hash = this.#runtime.createSha256();
    hash.update(lengthPrefixed(["magi-code.catalog-revision.v2", this.#scope, snapshot.fingerprint]));
    const revision = `c${(++this.#generation).toString(36)}-${hash.digest().slice(0, 32)}`;
    this.#current = { ...snapshot, revision };
    this.#valid = true;
    return this.#current;
  }

  /** The snapshot named `revision` if it is the current one and still valid, else null (`stale_catalog`). */
  valid(revision: string): CatalogSnapshot | null {
    return this.#valid && this.#current?.revision === revision ? this.#current : null;
  }

  /** Makes the current snapshot stale for good. */
  invalidate(): void {
    this.#valid = false;
  }
}

async function tag(revision: string, offset: number): Promise<string> {
  return (await sha256Hex(lengthPrefixed(["magi-code.catalog-cursor.v1", revision, String(offset)]))).slice(0, 24);
}

/** The cursor continuing `revision` at choice `offset`. */
export async function encodeCursor(revision: string, offset: number): Promise<string> {
  return `p${offset.toString(36)}-${await tag(revision, offset)}`;
}

/** The offset `cursor` names in `snapshot`, or null when it is not one of its cursors. */
export async function decodeCursor(snapshot: CatalogSnapshot, cursor: string): Promise<number | null> {
  const match = /^p([0-9a-z]{1,8})-([0-9a-f]{24})$/.exec(cursor);
  if (match === null) return null;
  const offset = parseInt(match[1]!, 36);
  if (offset <= 0 || offset >= snapshot.choices.count) return null;
  return match[2] === await tag(snapshot.revision, offset) ? offset : null;
}
