/**
 * Changing the approvals file: what `magi-code mcp approve` and `revoke`
 * do, and nothing else does. The file is replaced atomically, mode 0600,
 * and a concurrent change is never lost (`owner-file-update.ts`), so a
 * child starting meanwhile reads the old approvals or the new ones, never a
 * mix, and two commands approving at once both land.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import { type Approval, sortApprovals } from "./approvals.ts";
import { APPROVALS_FILE, approvalsPath, MAX_APPROVALS, MAX_APPROVALS_BYTES, readApprovals, serializeApprovals } from "./approvals-file.ts";
import { sameBytes, updateOwnerFile } from "./owner-file-update.ts";

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
  const outcome = await updateOwnerFile<UpdateApprovalsResult>(runtime, { home, name: APPROVALS_FILE, maxBytes: MAX_APPROVALS_BYTES }, async () => {
    const current = await readApprovals(runtime.fs, path, live);
    if (!current.ok) return { done: { ok: false, reason: current.code === ErrorCode.configurationInvalid ? "invalid" : "failed" } };
    const next = sortApprovals(change(current.approvals));
    if (next.length > MAX_APPROVALS) return { done: { ok: false, reason: "invalid" } };
    const bytes = serializeApprovals(next);
    if (sameBytes(bytes, serializeApprovals(current.approvals))) return { done: { ok: true, approvals: current.approvals, changed: false } };
    return { read: current.bytes, bytes, result: { ok: true, approvals: next, changed: true } };
  });
  return typeof outcome === "string" ? { ok: false, reason: outcome } : outcome;
}
