/**
 * One inventory pass over `$MC_HOME/sessions`: which primary histories and
 * which lease files it holds. Every directory entry counts against
 * `discovery_directory_entries` (sidecars, lease files, temporary files and
 * unrelated names too), and so does each of the two passes a listing makes.
 * A `.jsonl` name whose stem is not a session id makes the whole listing
 * `discovery_unavailable`: the directory holds something this version
 * cannot account for, and silently skipping a history is what the spec
 * forbids. Subdirectories (`subagents/`, `archive/`) are never entered.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { SESSION_ID_PATTERN } from "../../protocol/identity.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { FileSystem } from "../../host/runtime.ts";

/** What one pass found. */
export interface Inventory {
  /** Session ids with a primary history, ascending ASCII order, each once. */
  readonly sessions: readonly string[];
  /** Session ids with at least one `writer`, `active` or `append` lease file. */
  readonly leased: ReadonlySet<string>;
  /**
   * What two passes must agree on: the primary names and the lease files by
   * name. Renewals rewrite a lease through a temporary file, which is not
   * part of it, so a heartbeat alone never changes the key.
   */
  readonly key: string;
}

/** The outcome of {@link takeInventory}. */
export type InventoryResult =
  | { readonly ok: true; readonly inventory: Inventory }
  | { readonly ok: false; readonly code: typeof ErrorCode.discoveryLimit | typeof ErrorCode.discoveryUnavailable | typeof ErrorCode.staleRevision };

const PRIMARY_SUFFIX = ".jsonl";
const LEASE_NAME = /^([A-Za-z0-9_-]{1,64})\.(writer|active|append)\.lease$/;

/**
 * Lists `directory` once. A root that is not a private directory (a
 * symlink, a file, group- or world-writable) or cannot be listed is
 * `discovery_unavailable`; more entries than the bound is `discovery_limit`;
 * a primary name listed twice (the directory changed while it was read) is
 * `stale_revision`. A lease name listed twice is not: a heartbeat renames a
 * new file over the lease, which a directory read may then return twice, and
 * a renewal alone must never invalidate.
 */
export async function takeInventory(fs: FileSystem, directory: string): Promise<InventoryResult> {
  let entries;
  try {
    const root = await fs.lstat(directory);
    if (root.kind !== "directory" || (root.mode & 0o022) !== 0) return { ok: false, code: ErrorCode.discoveryUnavailable };
    entries = await fs.readDir(directory, LIMITS.discovery_directory_entries);
  } catch {
    return { ok: false, code: ErrorCode.discoveryUnavailable };
  }
  if (entries.length > LIMITS.discovery_directory_entries) return { ok: false, code: ErrorCode.discoveryLimit };
  const sessions: string[] = [];
  const leases = new Set<string>();
  const leased = new Set<string>();
  for (const { name } of entries) {
    if (name.endsWith(PRIMARY_SUFFIX)) {
      const id = name.slice(0, -PRIMARY_SUFFIX.length);
      if (!SESSION_ID_PATTERN.test(id)) return { ok: false, code: ErrorCode.discoveryUnavailable };
      sessions.push(id);
      continue;
    }
    const lease = LEASE_NAME.exec(name);
    if (lease !== null) {
      leases.add(name);
      leased.add(lease[1]!);
    }
  }
  sessions.sort();
  if (sessions.some((id, index) => id === sessions[index - 1])) return { ok: false, code: ErrorCode.staleRevision };
  return { ok: true, inventory: { sessions, leased, key: JSON.stringify([sessions, [...leases].sort()]) } };
}
