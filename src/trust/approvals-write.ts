/**
 * Changing the approvals file: what `magi-code mcp approve` and `revoke`
 * do, and nothing else does. The new file replaces the old one atomically
 * (`util/replace-file.ts`) with mode 0600, so a child starting meanwhile
 * reads the old approvals or the new ones, never a mix.
 *
 * Two commands changing it at once must not lose one change: the file is
 * read, changed, written under a temporary name, and renamed over the old
 * one only if it still holds what was read; otherwise the change is applied
 * again to what is there now, a few times at most. The window between that
 * last check and the rename is left open: two people approving in the same
 * millisecond is not a case worth a lock file that a crash could leave
 * behind.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import { readOwnerOnlyFile } from "../config/credentials.ts";
import { replaceFile } from "../util/replace-file.ts";
import { joinPath } from "../util/paths.ts";
import { type Approval, sortApprovals } from "./approvals.ts";
import { APPROVALS_FILE, approvalsPath, MAX_APPROVALS, MAX_APPROVALS_BYTES, readApprovals, serializeApprovals } from "./approvals-file.ts";

/** Attempts before giving up on a file that keeps changing. */
const ATTEMPTS = 5;

/**
 * The outcome of {@link updateApprovals}: the approvals now in the file and
 * whether this call changed it, or why it could not: `invalid` (the file is
 * not a valid owner-only approvals file, or the change would exceed
 * {@link MAX_APPROVALS}: nothing is overwritten), `contended` (it kept changing),
 * `failed` (the storage root or the file could not be read or written).
 */
export type UpdateApprovalsResult =
  | { readonly ok: true; readonly approvals: readonly Approval[]; readonly changed: boolean }
  | { readonly ok: false; readonly reason: "invalid" | "contended" | "failed" };

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * Applies `change` to the approvals in `home` (created 0700 if missing) and
 * writes the result, unless it equals what is there.
 */
export async function updateApprovals(
  runtime: Runtime,
  home: string,
  change: (current: readonly Approval[]) => readonly Approval[],
): Promise<UpdateApprovalsResult> {
  const path = approvalsPath(home);
  const live = new AbortController().signal;
  try {
    await runtime.fs.mkdir(home, 0o700);
  } catch {
    return { ok: false, reason: "failed" };
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await readApprovals(runtime.fs, path, live);
    if (!current.ok) return { ok: false, reason: current.code === ErrorCode.configurationInvalid ? "invalid" : "failed" };
    const next = sortApprovals(change(current.approvals));
    if (next.length > MAX_APPROVALS) return { ok: false, reason: "invalid" };
    const bytes = serializeApprovals(next);
    if (sameBytes(bytes, serializeApprovals(current.approvals))) {
      return { ok: true, approvals: current.approvals, changed: false };
    }
    let moved = false;
    const written = await replaceFile(runtime.fs, home, path, bytes, {
      temporary: joinPath(home, `.${APPROVALS_FILE}.${runtime.randomUUID()}.tmp`),
      mode: 0o600,
      beforeRename: async () => {
        const now = await readOwnerOnlyFile(runtime.fs, path, MAX_APPROVALS_BYTES);
        moved = !now.ok || !sameBytes(now.ok ? now.bytes : null, current.bytes);
        return !moved;
      },
    });
    if (written) return { ok: true, approvals: next, changed: true };
    if (!moved) return { ok: false, reason: "failed" };
  }
  return { ok: false, reason: "contended" };
}
