/**
 * Approvals: what the user, from a terminal, has said may run. An approval
 * binds a thing's name to the digest of its canonical definition and to the
 * settings file the definition came from. It knows nothing of what the thing
 * is: MCP servers are one kind (`src/mcp/`), project hooks will be another.
 *
 * An approval is keyed by kind, name and source: the same server name in the
 * project files of two workspaces is two approvals. Whether a definition is
 * approved is an exact match of all four fields, so any change to the
 * definition, or a move to another file, leaves it unapproved; that is how a
 * project file can never approve itself.
 *
 * @module
 */

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
 * `changed` (an approval of the same kind, name and source holds another
 * digest: the definition changed since), `not_approved` (none).
 */
export type ApprovalState = "approved" | "changed" | "not_approved";

function sameKey(a: Approval, b: Pick<Approval, "kind" | "name" | "source">): boolean {
  return a.kind === b.kind && a.name === b.name && a.source === b.source;
}

/** Where `subject` stands among `approvals`. */
export function approvalState(approvals: readonly Approval[], subject: Approval): ApprovalState {
  const found = approvals.find((approval) => sameKey(approval, subject));
  if (found === undefined) return "not_approved";
  return found.digest === subject.digest ? "approved" : "changed";
}

/** Orders approvals by kind, name and source, so a file's content depends only on its set. */
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

/** `approvals` with `approval` in place of any approval of the same kind, name and source. */
export function withApproval(approvals: readonly Approval[], approval: Approval): Approval[] {
  return sortApprovals([...approvals.filter((existing) => !sameKey(existing, approval)), approval]);
}

/** `approvals` without those of `kind` and `name` whose source is one of `sources`. */
export function withoutApprovals(approvals: readonly Approval[], kind: string, name: string, sources: readonly string[]): Approval[] {
  return approvals.filter((approval) => !sources.some((source) => sameKey(approval, { kind, name, source })));
}
