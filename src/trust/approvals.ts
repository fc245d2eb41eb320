/**
 * Approvals: what the user, from a terminal, has said may run. An approval
 * binds a thing's name to the digest of its canonical definition and to the
 * settings file the definition came from. It knows nothing of what the thing
 * is: MCP servers are one kind (`src/mcp/`), project hooks (`src/hooks/`) another.
 *
 * An approval is keyed by kind, name and source: the same server name in the
 * project files of two workspaces is two approvals. One key may hold several
 * digests (at most {@link MAX_DIGESTS_PER_KEY}, the oldest dropped first): a
 * global definition without a fixed working directory resolves to each
 * workspace it runs in, and approving it in one must not void it in another.
 * Whether a definition is approved is an exact match of all four fields, so
 * any change to the definition, or a move to another file, leaves it
 * unapproved; that is how a project file can never approve itself.
 *
 * @module
 */

/** Most digests kept for one kind, name and source; approving one more drops the oldest. */
export const MAX_DIGESTS_PER_KEY = 64;

/** One approval, as stored in the approvals file. */
export interface Approval {
  /** What kind of thing: `mcp` for MCP servers. */
  readonly kind: string;
  /** Its name in the settings. */
  readonly name: string;
  /** The absolute path of the settings file holding the definition. */
  readonly source: string;
  /** Lowercase hex SHA-256 of the canonical definition. */
  readonly digest: string;
}

/**
 * Where a definition stands: `approved` (an approval matches exactly),
 * `changed` (approvals of the same kind, name and source exist but hold
 * other digests: the definition changed since), `not_approved` (none).
 */
export type ApprovalState = "approved" | "changed" | "not_approved";

function sameKey(a: Approval, b: Pick<Approval, "kind" | "name" | "source">): boolean {
  return a.kind === b.kind && a.name === b.name && a.source === b.source;
}

/** Where `subject` stands among `approvals`. */
export function approvalState(approvals: readonly Approval[], subject: Approval): ApprovalState {
  const found = approvals.filter((approval) => sameKey(approval, subject));
  if (found.length === 0) return "not_approved";
  return found.some((approval) => approval.digest === subject.digest) ? "approved" : "changed";
}

/** Whether any approval (any digest) exists for `key`'s kind, name and source. */
export function hasApprovals(approvals: readonly Approval[], key: Pick<Approval, "kind" | "name" | "source">): boolean {
  return approvals.some((approval) => sameKey(approval, key));
}

/**
 * Orders approvals by kind, name and source, so a file's content depends only
 * on its set; the sort is stable, so one key's digests stay oldest first.
 */
export function sortApprovals(approvals: readonly Approval[]): Approval[] {
  const key = (approval: Approval) => [approval.kind, approval.name, approval.source];
  return [...approvals].sort((a, b) => {
    const [left, right] = [key(a), key(b)];
    for (let index = 0; index < left.length; index++) {
      if (left[index]! !== right[index]!) return left[index]! < right[index]! ? -1 : 1;
    }
    return 0;
  });
}

/**
 * `approvals` with `approval` added after the other digests of its kind,
 * name and source (unchanged when it is there already), the oldest of them
 * dropped beyond {@link MAX_DIGESTS_PER_KEY}.
 */
export function withApproval(approvals: readonly Approval[], approval: Approval): Approval[] {
  if (approvalState(approvals, approval) === "approved") return sortApprovals(approvals);
  const same = approvals.filter((existing) => sameKey(existing, approval));
  const dropped = new Set(same.slice(0, Math.max(0, same.length + 1 - MAX_DIGESTS_PER_KEY)));
  return sortApprovals([...approvals.filter((existing) => !dropped.has(existing)), approval]);
}

/** `approvals` without those of `kind` and `name` whose source is one of `sources`. */
export function withoutApprovals(approvals: readonly Approval[], kind: string, name: string, sources: readonly string[]): Approval[] {
  return approvals.filter((approval) => !sources.some((source) => sameKey(approval, { kind, name, source })));
}
